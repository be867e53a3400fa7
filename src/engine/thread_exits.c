/* The names of the threads that ended during a trace (thread_exits.h): a
 * ring of the last THREAD_EXITS_MAX, each tagged with its trace. */
#include "engine/thread_exits.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "engine/engine_internal.h"

typedef struct thread_exit {
  uint64_t generation; /* the trace it wrote in (it names the session); 0: free */
  uint64_t tid;
  uint64_t ns;  /* when it ended (trace clock) */
  bool renamed; /* its name at the end is not the one it wrote with */
  char name[17];
} thread_exit_t;

/* One ring for every session, under exits_lock (taken inside a session's
 * lock, never around one). */
static pthread_mutex_t exits_lock = PTHREAD_MUTEX_INITIALIZER;
static thread_exit_t exits[THREAD_EXITS_MAX];
static size_t next_exit;

void thread_exits__note(const trace_context_t* w) {
  uint64_t generation = engine__of(w)->generation;
  if (generation == 0 || !w->thread_registered || w->generation != generation) return;
  char name[17] = {0};
  if (prctl(PR_GET_NAME, name) != 0) memcpy(name, w->name, sizeof(w->name));
  pthread_mutex_lock(&exits_lock);
  thread_exit_t* e = &exits[next_exit++ % THREAD_EXITS_MAX];
  e->generation = generation;
  e->tid = w->tid;
  e->ns = trace_clock__now_ns();
  memcpy(e->name, name, sizeof(e->name));
  e->name[16] = '\0';
  e->renamed = strncmp(e->name, w->name, sizeof(w->name)) != 0;
  pthread_mutex_unlock(&exits_lock);
}

/* Whether another thread's writer `w` registered its thread in trace
 * `generation` (so wrote in it, under the name w->name, which is then
 * final: writer.c orders its resets before publishing a generation). Its
 * thread may be attaching meanwhile, hence the atomic reads, generation
 * first. */
static bool wrote_in(const trace_context_t* w, uint64_t generation) {
  return generation != 0 && ATOMIC_ACQUIRE(&w->generation) == generation &&
         ATOMIC_ACQUIRE(&w->thread_registered);
}

void thread_exits__each(void (*fn)(void* arg, uint64_t tid, const char* name, int alive),
                        void* arg) {
  engine_t* session = &engine__sessions[0]; /* file mode's: one session */
  pthread_mutex_lock(&session->lock);
  uint64_t generation = session->generation;
  pthread_mutex_lock(&exits_lock);
  for (size_t i = 0; i < THREAD_EXITS_MAX; i++)
    if (exits[i].generation != 0 && exits[i].generation == generation)
      fn(arg, exits[i].tid, exits[i].name, 0);
  pthread_mutex_unlock(&exits_lock);
  for (const trace_context_t* w = session->writers; w; w = w->next)
    if (w->in_use && wrote_in(w, generation)) fn(arg, w->tid, w->name, 1);
  pthread_mutex_unlock(&session->lock);
}

/* A live thread of this process's name now; false if it is gone. */
static bool comm_of(uint64_t tid, char name[17]) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/task/%" PRIu64 "/comm", tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n;
  do n = read(fd, name, 16);
  while (n < 0 && errno == EINTR);
  close(fd);
  if (n <= 0) return false;
  name[n] = '\0';
  name[strcspn(name, "\n")] = '\0';
  return name[0] != '\0';
}

void thread_exits__each_at_end(engine_t* session, bool renamed,
                               void (*fn)(void* arg, uint64_t tid, const char* name, uint64_t ns),
                               void* arg) {
  pthread_mutex_lock(&session->lock);
  uint64_t generation = session->generation;
  /* oldest first (the ring's order), so a reused tid's later end comes
   * later */
  pthread_mutex_lock(&exits_lock);
  for (size_t k = 0; k < THREAD_EXITS_MAX && generation != 0; k++) {
    const thread_exit_t* e = &exits[(next_exit + k) % THREAD_EXITS_MAX];
    if (e->generation == generation && e->renamed == renamed) fn(arg, e->tid, e->name, e->ns);
  }
  pthread_mutex_unlock(&exits_lock);
  for (const trace_context_t* w = session->writers; w; w = w->next) {
    char name[17];
    if (w->in_use && wrote_in(w, generation) && comm_of(w->tid, name) &&
        (strncmp(name, w->name, sizeof(w->name)) != 0) == renamed)
      fn(arg, w->tid, name, trace_clock__now_ns());
  }
  pthread_mutex_unlock(&session->lock);
}
