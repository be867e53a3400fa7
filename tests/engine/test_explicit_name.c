/* The engine's memory of the names a program gave its own process and
 * threads (src/engine/explicit_name.h): one slot per koid, the latest name
 * and time; a koid named over and over does not push the others out;
 * another process's (a fork's parent's) names are not this one's; notes
 * from several threads while the reader reads (run under TSan too). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "engine/explicit_name.h"
#include "test.h"

typedef struct got {
  size_t count;
  bool thread[EXPLICIT_NAMES_MAX];
  uint64_t koid[EXPLICIT_NAMES_MAX], ns[EXPLICIT_NAMES_MAX];
  char name[EXPLICIT_NAMES_MAX][EXPLICIT_NAME_BYTES];
} got_t;

static void collect(void* arg, bool thread, uint64_t koid, const char* name, uint64_t ns,
                    uint64_t ended_ns) {
  (void)ended_ns;
  got_t* g = arg;
  ASSERT_TRUE(g->count < EXPLICIT_NAMES_MAX);
  g->thread[g->count] = thread;
  g->koid[g->count] = koid;
  g->ns[g->count] = ns;
  snprintf(g->name[g->count], EXPLICIT_NAME_BYTES, "%s", name);
  g->count++;
}

/* The entries for (thread, koid): how many, and the last one's index. */
static size_t find(const got_t* g, bool thread, uint64_t koid, size_t* last) {
  size_t found = 0;
  for (size_t i = 0; i < g->count; i++)
    if (g->thread[i] == thread && g->koid[i] == koid) {
      found++;
      *last = i;
    }
  return found;
}

/* What the table gives for process pid (explicit_name__each), on the heap. */
static got_t* names_of(uint64_t pid, uint64_t since_ns) {
  got_t* g = calloc(1, sizeof(*g));
  ASSERT_TRUE(g);
  explicit_name__each(pid, since_ns, collect, g);
  return g;
}

static void note(uint64_t pid, bool thread, uint64_t koid, const char* name, uint64_t ns) {
  explicit_name__note(pid, thread, koid, name, strlen(name), ns);
}

static void test_one_slot_per_koid(void) {
  note(10, false, 10, "service", 1);
  note(10, true, 10, "main", 2);
  /* a thread that names itself in a loop */
  char name[32];
  for (int i = 0; i < 10000; i++) {
    snprintf(name, sizeof(name), "busy %d", i);
    note(10, true, 11, name, (uint64_t)(100 + i));
  }
  got_t* g = names_of(10, 0);
  size_t at;
  ASSERT_EQ(find(g, false, 10, &at), 1u);
  ASSERT_STREQ(g->name[at], "service");
  ASSERT_EQ(g->ns[at], 1u);
  ASSERT_EQ(find(g, true, 10, &at), 1u);
  ASSERT_STREQ(g->name[at], "main");
  ASSERT_EQ(find(g, true, 11, &at), 1u);
  ASSERT_STREQ(g->name[at], "busy 9999");
  ASSERT_EQ(g->ns[at], 10099u);
  ASSERT_EQ(g->count, 3u);
  /* oldest first */
  ASSERT_TRUE(g->ns[0] <= g->ns[1] && g->ns[1] <= g->ns[2]);

  /* another process's names are not this one's */
  memset(g, 0, sizeof(*g));
  explicit_name__each(20, 0, collect, g);
  ASSERT_EQ(g->count, 0u);

  /* a name longer than a slot is cut */
  char long_name[EXPLICIT_NAME_BYTES + 40];
  memset(long_name, 'x', sizeof(long_name) - 1);
  long_name[sizeof(long_name) - 1] = '\0';
  note(30, false, 30, long_name, 5);
  memset(g, 0, sizeof(*g));
  explicit_name__each(30, 0, collect, g);
  ASSERT_EQ(g->count, 1u);
  ASSERT_EQ(strlen(g->name[0]), (size_t)EXPLICIT_NAME_BYTES - 1);
  free(g);
}

/* Threads [first, first + count) of process pid named "<prefix><koid>",
 * each at time koid. */
static void name_threads(uint64_t pid, uint64_t first, uint64_t count, char prefix) {
  char name[32];
  for (uint64_t koid = first; koid < first + count; koid++) {
    snprintf(name, sizeof(name), "%c%llu", prefix, (unsigned long long)koid);
    note(pid, true, koid, name, koid);
  }
}

/* More koids than slots: the latest EXPLICIT_NAMES_MAX at most, each once,
 * and the newest of them always kept. */
static void test_more_than_slots(void) {
  char name[32];
  name_threads(40, 1000, 4 * EXPLICIT_NAMES_MAX, 't');
  got_t* g = names_of(40, 0);
  ASSERT_TRUE(g->count > EXPLICIT_NAMES_MAX / 2);
  for (size_t i = 0; i < g->count; i++) {
    size_t at;
    ASSERT_EQ(find(g, true, g->koid[i], &at), 1u);
    snprintf(name, sizeof(name), "t%llu", (unsigned long long)g->koid[i]);
    ASSERT_STREQ(g->name[i], name);
  }
  size_t at;
  ASSERT_EQ(find(g, true, 1000 + 4 * EXPLICIT_NAMES_MAX - 1, &at), 1u);
  free(g);
}

/* The process and its main thread, named first (the oldest), outlast any
 * number of other threads named after them. */
static void test_process_kept(void) {
  note(60, false, 60, "the service", 1);
  note(60, true, 60, "its main thread", 2);
  name_threads(60, 100000, 8 * EXPLICIT_NAMES_MAX, 'w');
  got_t* g = names_of(60, 0);
  size_t at;
  ASSERT_EQ(find(g, false, 60, &at), 1u);
  ASSERT_STREQ(g->name[at], "the service");
  ASSERT_EQ(find(g, true, 60, &at), 1u);
  ASSERT_STREQ(g->name[at], "its main thread");
  free(g);
}

/* A thread that ended is left out of the traces that start after its end,
 * and gives way before the threads still running; named again (its tid
 * reused in the process), it is running again. */
static void test_ended(void) {
  note(70, true, 7001, "short-lived", 10);
  note(70, true, 7002, "long-lived", 11);
  explicit_name__ended(70, 7001, 100);
  explicit_name__ended(70, 7999, 100); /* never named: nothing */
  got_t* g = calloc(1, sizeof(*g));
  ASSERT_TRUE(g);
  size_t at;
  explicit_name__each(70, 50, collect, g); /* a trace that started before the end */
  ASSERT_EQ(find(g, true, 7001, &at), 1u);
  ASSERT_EQ(find(g, true, 7002, &at), 1u);
  memset(g, 0, sizeof(*g));
  explicit_name__each(70, 200, collect, g); /* one that started after it */
  ASSERT_EQ(find(g, true, 7001, &at), 0u);
  ASSERT_EQ(find(g, true, 7002, &at), 1u);
  note(70, true, 7001, "tid reused", 300);
  memset(g, 0, sizeof(*g));
  explicit_name__each(70, 200, collect, g);
  ASSERT_EQ(find(g, true, 7001, &at), 1u);
  ASSERT_STREQ(g->name[at], "tid reused");
  free(g);
}

enum { NOTERS = 2, NOTES = 20000 };

static void* noter(void* arg) {
  uint64_t base = (uint64_t)(uintptr_t)arg;
  char name[32];
  for (int i = 0; i < NOTES; i++) {
    snprintf(name, sizeof(name), "n%d", i);
    note(50, true, base + (uint64_t)(i % 8), name, (uint64_t)i);
  }
  return NULL;
}

static void test_concurrent(void) {
  pthread_t t[NOTERS];
  for (int i = 0; i < NOTERS; i++)
    ASSERT_EQ(pthread_create(&t[i], NULL, noter, (void*)(uintptr_t)(5000 + 100 * i)), 0);
  got_t* g = calloc(1, sizeof(*g));
  ASSERT_TRUE(g);
  for (int round = 0; round < 50; round++) {
    memset(g, 0, sizeof(*g));
    explicit_name__each(50, 0, collect, g); /* while they note */
    for (size_t i = 0; i < g->count; i++) ASSERT_EQ(g->name[i][0], 'n');
  }
  for (int i = 0; i < NOTERS; i++) pthread_join(t[i], NULL);
  /* every koid they named is known, and each slot whole: the name and
   * the time of one note (a note that met others in its set may have been
   * left out, so not necessarily the last) */
  memset(g, 0, sizeof(*g));
  explicit_name__each(50, 0, collect, g);
  for (int i = 0; i < NOTERS; i++)
    for (uint64_t k = 0; k < 8; k++) {
      size_t at;
      ASSERT_TRUE(find(g, true, 5000 + 100 * (uint64_t)i + k, &at) >= 1);
    }
  for (size_t i = 0; i < g->count; i++) {
    char expect[32];
    snprintf(expect, sizeof(expect), "n%llu", (unsigned long long)g->ns[i]);
    ASSERT_STREQ(g->name[i], expect);
    ASSERT_EQ(g->ns[i] % 8, (g->koid[i] - 5000) % 100);
  }
  free(g);
}

int main(void) {
  test_one_slot_per_koid();
  test_more_than_slots();
  test_process_kept();
  test_ended();
  test_concurrent();
  printf("ok\n");
  return 0;
}
