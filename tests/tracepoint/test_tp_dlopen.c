/* TRACE_EVENT() in a library loaded with dlopen while tracing: its
 * descriptor registers from the library's constructor, its format is
 * written at registration (category enabled, tracing on), its event is
 * recorded and rendered; after dlclose (the destructor unregisters) a new
 * trace starts and stops cleanly. */
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>

#include "engine/harness.h"
#include "test.h"
#include "trace-reader/formats.h"
#include "trace-reader/reader.h"
#include "trace/event.h"

/* The archive's tp_dso events, in order, render as texts[0..n), each with
 * its format read before it; one format in all. */
static void check_events(harness_t* h, const char* const* texts, int n) {
  size_t size;
  const uint8_t* fxt = harness_archive(h, &size);
  trace_reader_t* r = trace_reader_open_memory(fxt, size, NULL);
  trace_format_set_t* set = trace_format_set_new();
  trace_record_t rec;
  int events = 0;
  char text[256];
  while (trace_reader_next(r, &rec) == TRACE_READ_RECORD) {
    ASSERT_TRUE(trace_format_set_add_record(set, &rec, NULL) >= 0);
    if (rec.type != 4 || rec.event.category.length != 6) continue; /* "tp_dso" */
    const trace_event_format_t* f = trace_format_set_find_event(set, &rec);
    ASSERT_MSG(f != NULL, "an event at byte %" PRIu64 " comes before its format", rec.offset);
    ASSERT_EQ(trace_format_render(f, &rec, text, sizeof(text)), 1);
    ASSERT_TRUE(events < n);
    ASSERT_STREQ(text, texts[events]);
    events++;
  }
  ASSERT_EQ(events, n);
  ASSERT_EQ(trace_format_set_count(set), 1);
  trace_format_set_free(set);
  trace_reader_close(r);
}

static sem_t claimed, loaded;
static void (*other_emit)(int);

static void* other_thread(void* arg) {
  (void)arg;
  TRACE_INSTANT("other", "claim", TRACE_SCOPE_THREAD); /* takes this thread's chunk */
  sem_post(&claimed);
  sem_wait(&loaded);
  other_emit(8);
  return NULL;
}

/* Oneshot mode (no durable buffer): an event never comes before its format
 * in the buffer's scan order. Another thread takes its chunk first; the
 * library is loaded after it, so its format, written at registration by
 * this thread, lands in a later chunk; the other thread's event then goes
 * into its own earlier chunk, and must bring its own format. */
static void check_format_order(const char* library) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "tp_dso,other"), 0);
  ASSERT_EQ(sem_init(&claimed, 0, 0), 0);
  ASSERT_EQ(sem_init(&loaded, 0, 0), 0);
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, other_thread, NULL), 0);
  sem_wait(&claimed);
  void* dso = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  ASSERT_MSG(dso != NULL, "dlopen: %s", dlerror());
  other_emit = (void (*)(int))dlsym(dso, "tp_dso_emit");
  ASSERT_TRUE(other_emit != NULL);
  sem_post(&loaded);
  ASSERT_EQ(pthread_join(t, NULL), 0);
  other_emit(9);
  harness_stop(&h);
  static const char* const texts[] = {"n=8 who=dso", "n=9 who=dso"};
  check_events(&h, texts, 2);
  harness_free(&h);
  ASSERT_EQ(dlclose(dso), 0);
}

int main(int argc, char** argv) {
  ASSERT_TRUE(argc == 2);
  check_format_order(argv[1]);
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "tp_dso"), 0);
  void* dso = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  ASSERT_MSG(dso != NULL, "dlopen: %s", dlerror());
  void (*emit)(int) = (void (*)(int))dlsym(dso, "tp_dso_emit");
  ASSERT_TRUE(emit != NULL);
  emit(7);
  harness_stop(&h);
  static const char* const texts[] = {"n=7 who=dso"};
  check_events(&h, texts, 1);
  harness_free(&h);
  ASSERT_EQ(dlclose(dso), 0);
  /* the unloaded library's descriptor is gone from the engine's list */
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "tp_dso"), 0);
  harness_stop(&h);
  harness_free(&h);
  printf("ok\n");
  return 0;
}
