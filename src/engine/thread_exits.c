/* The names of the threads that ended during a trace (thread_exits.h): a
 * ring of the last THREAD_EXITS_MAX, each tagged with its trace. */
#include "engine/thread_exits.h"

#include <string.h>
#include <sys/prctl.h>

#include "engine/engine_internal.h"

typedef struct thread_exit {
  uint64_t generation; /* the trace it wrote in; 0: free */
  uint64_t tid;
  char name[17];
} thread_exit_t;

/* Under engine.lock. */
static thread_exit_t exits[THREAD_EXITS_MAX];
static size_t next_exit;

void thread_exits__note(const trace_context_t* w) {
  uint64_t generation = engine__of(w)->generation;
  if (generation == 0 || !w->thread_registered || w->generation != generation) return;
  thread_exit_t* e = &exits[next_exit++ % THREAD_EXITS_MAX];
  char name[17] = {0};
  if (prctl(PR_GET_NAME, name) != 0) memcpy(name, w->name, sizeof(w->name));
  e->generation = generation;
  e->tid = w->tid;
  memcpy(e->name, name, sizeof(e->name));
  e->name[16] = '\0';
}

void thread_exits__each(void (*fn)(void* arg, uint64_t tid, const char* name, int alive),
                        void* arg) {
  engine_t* session = &engine__sessions[0]; /* file mode's: one session */
  pthread_mutex_lock(&session->lock);
  uint64_t generation = session->generation;
  for (size_t i = 0; i < THREAD_EXITS_MAX; i++)
    if (exits[i].generation != 0 && exits[i].generation == generation)
      fn(arg, exits[i].tid, exits[i].name, 0);
  for (const trace_context_t* w = session->writers; w; w = w->next)
    if (w->in_use && w->thread_registered && w->generation == generation && generation != 0)
      fn(arg, w->tid, w->name, 1);
  pthread_mutex_unlock(&session->lock);
}
