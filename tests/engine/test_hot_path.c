/* The record path makes no syscall, takes no lock and allocates nothing
 * (docs/buffer-layout.md), shown for every event kind in every buffering
 * mode, including when the buffer is full (oneshot), wraps (circular) and
 * switches (streaming):
 *
 *   - malloc, calloc, realloc, free, aligned_alloc, posix_memalign,
 *     pthread_mutex_lock / unlock / trylock and write are defined here, so
 *     they override libc's for the engine too (linked statically into this
 *     executable); each counts the calls made by a thread while it is in the
 *     hot section, then forwards to libc.
 *   - the hot thread records one event of each kind first (a thread's first
 *     record attaches it: mutex and allocation allowed), then installs a
 *     seccomp filter on itself that traps every syscall except
 *       write(engine wake eventfd)   streaming only: the one hand-off per switch
 *       rt_sigreturn                 to return from the trap handler
 *       exit                         to end the thread after the hot section;
 *     the SIGSYS handler records the syscall number and address (the test
 *     fails on any), then records every kind many times, with the category
 *     enabled and disabled, until the buffer is full / wrapped / switched.
 *   - it reports completion through an atomic variable and spins (no syscall)
 *     until the main thread has read it, then leaves with a raw exit.
 * After the hot section the engine is stopped and the archive read back: each
 * kind was recorded, inside the filtered section too.
 *
 * Every macro of <trace/event.h> is used when the header is present, the
 * equivalent <trace/internal/event_helpers.h> calls otherwise. ctest runs the
 * test twice: with the engine's default clock (TSC when invariant), and with
 * FXTRACE_CLOCK=monotonic (clock_gettime through the vDSO).
 *
 * Under AddressSanitizer or ThreadSanitizer the test is skipped (exit 77):
 * their runtimes own malloc and make syscalls from their interceptors. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HOT_PATH_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define HOT_PATH_SANITIZER 1
#endif
#endif

#include <stdio.h>

#ifdef HOT_PATH_SANITIZER
int main(void) {
  printf(
      "test_hot_path: skipped: built with a sanitizer, whose runtime intercepts malloc and "
      "makes syscalls from its interceptors\n");
  return 77;
}
#else

#include <dlfcn.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "harness.h"
#include "test.h"
#include "trace-reader/reader.h"

#if __has_include("trace/event.h")
#include "trace/event.h"
#define HOT_PATH_MACROS 1
#else
#include "trace/internal/event_helpers.h"
#define HOT_PATH_MACROS 0
#endif

/* ---- interposed libc functions ---- */

enum {
  C_MALLOC,
  C_CALLOC,
  C_REALLOC,
  C_FREE,
  C_ALIGNED,
  C_LOCK,
  C_UNLOCK,
  C_TRYLOCK,
  C_WAKE_WRITE,
  C_OTHER_WRITE,
  C_COUNT
};
static const char* const counter_names[C_COUNT] = {"malloc",
                                                   "calloc",
                                                   "realloc",
                                                   "free",
                                                   "aligned_alloc/posix_memalign",
                                                   "pthread_mutex_lock",
                                                   "pthread_mutex_unlock",
                                                   "pthread_mutex_trylock",
                                                   "write(wake fd)",
                                                   "write(other fd)"};
static uint64_t counts[C_COUNT];
static __thread int in_hot; /* this thread is in the hot section */
static int wake_fd = -1;

static void count(int which) {
  if (in_hot) __atomic_add_fetch(&counts[which], 1, __ATOMIC_RELAXED);
}

extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
extern void __libc_free(void*);
extern void* __libc_memalign(size_t, size_t);

void* malloc(size_t n) {
  count(C_MALLOC);
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t size) {
  count(C_CALLOC);
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) {
  count(C_REALLOC);
  return __libc_realloc(p, n);
}
void free(void* p) {
  count(C_FREE);
  __libc_free(p);
}
void* aligned_alloc(size_t alignment, size_t n) {
  count(C_ALIGNED);
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, size_t alignment, size_t n) {
  count(C_ALIGNED);
  void* p = __libc_memalign(alignment, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

static int (*real_lock)(pthread_mutex_t*);
static int (*real_unlock)(pthread_mutex_t*);
static int (*real_trylock)(pthread_mutex_t*);
static ssize_t (*real_write)(int, const void*, size_t);

__attribute__((constructor)) static void resolve_real_functions(void) {
  real_lock = (int (*)(pthread_mutex_t*))dlsym(RTLD_NEXT, "pthread_mutex_lock");
  real_unlock = (int (*)(pthread_mutex_t*))dlsym(RTLD_NEXT, "pthread_mutex_unlock");
  real_trylock = (int (*)(pthread_mutex_t*))dlsym(RTLD_NEXT, "pthread_mutex_trylock");
  real_write = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  if (!real_lock || !real_unlock || !real_trylock || !real_write) {
    static const char msg[] = "test_hot_path: dlsym(RTLD_NEXT) failed\n";
    syscall(SYS_write, 2, msg, sizeof(msg) - 1);
    _exit(1);
  }
}

int pthread_mutex_lock(pthread_mutex_t* m) {
  count(C_LOCK);
  return real_lock(m);
}
int pthread_mutex_unlock(pthread_mutex_t* m) {
  count(C_UNLOCK);
  return real_unlock(m);
}
int pthread_mutex_trylock(pthread_mutex_t* m) {
  count(C_TRYLOCK);
  return real_trylock(m);
}
ssize_t write(int fd, const void* p, size_t n) {
  count(fd == wake_fd ? C_WAKE_WRITE : C_OTHER_WRITE);
  if (!real_write) return syscall(SYS_write, fd, p, n);
  return real_write(fd, p, n);
}

/* ---- seccomp ---- */

#if defined(__x86_64__)
#define HOT_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define HOT_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "test_hot_path: add this architecture's AUDIT_ARCH and return register"
#endif

enum { MAX_TRAPS = 16 };
static int trap_count;
static int trap_nr[MAX_TRAPS];
static void* trap_addr[MAX_TRAPS];

/* SIGSYS from SECCOMP_RET_TRAP: remember the syscall; it fails with ENOSYS. */
static void on_sigsys(int sig, siginfo_t* info, void* context) {
  (void)sig;
  int i = __atomic_fetch_add(&trap_count, 1, __ATOMIC_RELAXED);
  if (i < MAX_TRAPS) {
    trap_nr[i] = info->si_syscall;
    trap_addr[i] = info->si_call_addr;
  }
  ucontext_t* uc = (ucontext_t*)context;
#if defined(__x86_64__)
  uc->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
#else
  uc->uc_mcontext.regs[0] = (uint64_t)-ENOSYS;
#endif
}

/* Traps every syscall of the calling thread except rt_sigreturn, exit and,
 * if allowed_fd >= 0, write(allowed_fd, ...). */
static int install_filter(int allowed_fd) {
  uint32_t fd = allowed_fd >= 0 ? (uint32_t)allowed_fd : UINT32_MAX;
  struct sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HOT_AUDIT_ARCH, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_write, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, fd, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
  };
  struct sock_fprog prog = {(unsigned short)(sizeof(code) / sizeof(code[0])), code};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -errno;
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) return -errno;
  return 0;
}

/* ---- every event kind ---- */

enum { ITERATIONS = 4000 };

static const unsigned char blob[48] = {1, 2, 3, 4, 5, 6, 7, 8};
static const char text[] = "an inline string of some length";
static trace_koid_t self_pid, self_tid;

typedef struct tally {
  uint64_t enabled, category_enabled, category_disabled, nonces;
} tally_t;

#if HOT_PATH_MACROS
static void record_all(uint64_t i, tally_t* t) {
  if (TRACE_ENABLED()) t->enabled++;
  if (TRACE_CATEGORY_ENABLED("hot")) t->category_enabled++;
  if (TRACE_CATEGORY_ENABLED("disabled")) t->category_disabled++;
  if (TRACE_NONCE() != 0) t->nonces++;
  TRACE_INSTANT("hot", "instant0", TRACE_SCOPE_THREAD);
  TRACE_INSTANT("hot", "instant", TRACE_SCOPE_PROCESS, "i", i, "s", TA_STRING(text), "lit",
                TA_STRING_LITERAL("literal"));
  TRACE_INSTANT("hot", "types", TRACE_SCOPE_GLOBAL, "i", TA_UINT64(i), "n", TA_NULL(), "b",
                TA_BOOL(i & 1), "i32", TA_INT32(-1), "u32", TA_UINT32(2), "i64", TA_INT64(-3), "d",
                TA_DOUBLE(0.5), "ca", TA_CHAR_ARRAY(text, 9 + i % 20), "p", TA_POINTER(&i), "k",
                TA_KOID(42));
  TRACE_INSTANT("disabled", "never", TRACE_SCOPE_THREAD, "i", i);
  TRACE_COUNTER("hot", "counter", 1, "i", i, "v", TA_DOUBLE((double)i * 0.5));
  {
    TRACE_DURATION("hot", "duration", "i", i);
    TRACE_DURATION("disabled", "never");
  }
  TRACE_DURATION_BEGIN("hot", "begin_end", "i", i);
  TRACE_DURATION_END("hot", "begin_end", "i", i);
  TRACE_ASYNC_BEGIN("hot", "async", i + 1, "i", i);
  TRACE_ASYNC_INSTANT("hot", "async", i + 1, "i", i);
  TRACE_ASYNC_END("hot", "async", i + 1, "i", i);
  TRACE_FLOW_BEGIN("hot", "flow", i + 1, "i", i);
  TRACE_FLOW_STEP("hot", "flow", i + 1, "i", i);
  TRACE_FLOW_END("hot", "flow", i + 1, "i", i);
  TRACE_INSTAFLOW_BEGIN("hot", "instaflow_begin", i + 1, "i", i);
  TRACE_INSTAFLOW_STEP("hot", "instaflow_step", i + 1, "i", i);
  TRACE_INSTAFLOW_END("hot", "instaflow_end", i + 1, "i", i);
  TRACE_BLOB(TRACE_BLOB_TYPE_DATA, "blob", blob, sizeof(blob));
  TRACE_BLOB_EVENT("hot", "blob_event", blob, sizeof(blob), "i", i);
  TRACE_BLOB_ATTACHMENT("hot", "blob_attachment", blob, sizeof(blob));
  if (i % 256 <= 1 || i >= ITERATIONS - 1) { /* each writes a string record (durable): not too
                                              * many; the last ones stay in circular mode */
    TRACE_KERNEL_OBJECT(self_pid, self_tid, "hot thread", "i", i);
    TRACE_KERNEL_OBJECT(self_pid, 0, "hot process");
  }
  trace_ticks_t now = trace_context_ticks_now();
  TRACE_VTHREAD_DURATION_BEGIN("hot", "vduration", "vthread", 7, now, "i", i);
  TRACE_VTHREAD_DURATION_END("hot", "vduration", "vthread", 7, now + 1, "i", i);
  TRACE_VTHREAD_FLOW_BEGIN("hot", "vflow", "vthread", 7, i + 1, now, "i", i);
  TRACE_VTHREAD_FLOW_STEP("hot", "vflow", "vthread", 7, i + 1, now, "i", i);
  TRACE_VTHREAD_FLOW_END("hot", "vflow", "vthread", 7, i + 1, now, "i", i);
}
#else
/* The same records through the macros' helpers, as the macros expand. */
#define HOT_ARGS(i)    \
  trace_arg_t a[1] = { \
      trace_make_arg(trace_internal_make_literal_ref("i"), trace_make_uint64_arg_value(i))}
#define HOT_SITE(category, ...)                                                            \
  do {                                                                                     \
    static trace_site_t site;                                                              \
    trace_string_ref_t cat;                                                                \
    trace_context_t* c = trace_acquire_context_for_category_cached(category, &site, &cat); \
    if (c) {                                                                               \
      __VA_ARGS__;                                                                         \
    }                                                                                      \
  } while (0)
static void record_all(uint64_t i, tally_t* t) {
  if (trace_is_enabled()) t->enabled++;
  HOT_SITE("hot", (t->category_enabled++, trace_release_context(c)));
  HOT_SITE("disabled", (t->category_disabled++, trace_release_context(c)));
  if (trace_generate_nonce() != 0) t->nonces++;
  HOT_SITE("hot", trace_internal_write_instant_event_record_and_release_context(
                      c, &cat, "instant0", TRACE_SCOPE_THREAD, NULL, 0));
  HOT_SITE("hot", {
    trace_arg_t a[3] = {
        trace_make_arg(trace_internal_make_literal_ref("i"), trace_make_uint64_arg_value(i)),
        trace_make_arg(trace_internal_make_literal_ref("s"),
                       trace_make_string_arg_value(trace_make_inline_c_string_ref(text))),
        trace_make_arg(trace_internal_make_literal_ref("lit"),
                       trace_make_string_arg_value(trace_internal_make_literal_ref("literal")))};
    trace_internal_write_instant_event_record_and_release_context(c, &cat, "instant",
                                                                  TRACE_SCOPE_PROCESS, a, 3);
  });
  HOT_SITE("hot", {
    trace_arg_t a[4] = {
        trace_make_arg(trace_internal_make_literal_ref("i"), trace_make_uint64_arg_value(i)),
        trace_make_arg(trace_internal_make_literal_ref("b"), trace_make_bool_arg_value(i & 1)),
        trace_make_arg(trace_internal_make_literal_ref("d"), trace_make_double_arg_value(0.5)),
        trace_make_arg(trace_internal_make_literal_ref("k"), trace_make_koid_arg_value(42))};
    trace_internal_write_instant_event_record_and_release_context(c, &cat, "types",
                                                                  TRACE_SCOPE_GLOBAL, a, 4);
  });
  HOT_SITE("disabled", {
    HOT_ARGS(i);
    trace_internal_write_instant_event_record_and_release_context(c, &cat, "never",
                                                                  TRACE_SCOPE_THREAD, a, 1);
  });
  HOT_SITE("hot", {
    HOT_ARGS(i);
    trace_internal_write_counter_event_record_and_release_context(c, &cat, "counter", 1, a, 1);
  });
  {
    static trace_site_t site;
    trace_string_ref_t cat;
    trace_internal_duration_scope_t scope = {"hot", "duration", &site, 0, NULL, 0};
    trace_context_t* c = trace_acquire_context_for_category_cached("hot", &site, &cat);
    if (c) {
      scope.start_time = trace_context_ticks_now();
      trace_release_context(c);
    }
    trace_internal_duration_scope_end(&scope);
  }
  HOT_SITE("hot", {
    HOT_ARGS(i);
    trace_internal_write_duration_begin_event_record_and_release_context(c, &cat, "begin_end", a,
                                                                         1);
  });
  HOT_SITE("hot", {
    HOT_ARGS(i);
    trace_internal_write_duration_end_event_record_and_release_context(c, &cat, "begin_end", a, 1);
  });
#define HOT_ID(kind, name)                                                                      \
  HOT_SITE("hot", {                                                                             \
    HOT_ARGS(i);                                                                                \
    trace_internal_write_##kind##_event_record_and_release_context(c, &cat, name, i + 1, a, 1); \
  })
  HOT_ID(async_begin, "async");
  HOT_ID(async_instant, "async");
  HOT_ID(async_end, "async");
  HOT_ID(flow_begin, "flow");
  HOT_ID(flow_step, "flow");
  HOT_ID(flow_end, "flow");
#define HOT_INSTAFLOW(kind, name)                                                         \
  HOT_SITE("hot", {                                                                       \
    HOT_ARGS(i);                                                                          \
    trace_internal_write_instaflow_and_release_context(c, &cat, name, kind, i + 1, a, 1); \
  })
  HOT_INSTAFLOW(8, "instaflow_begin");
  HOT_INSTAFLOW(9, "instaflow_step");
  HOT_INSTAFLOW(10, "instaflow_end");
  {
    trace_context_t* c = trace_acquire_context();
    if (c)
      trace_internal_write_blob_record_and_release_context(c, TRACE_BLOB_TYPE_DATA, "blob", blob,
                                                           sizeof(blob));
  }
  HOT_SITE("hot", {
    HOT_ARGS(i);
    trace_internal_write_blob_event_record_and_release_context(c, &cat, "blob_event", blob,
                                                               sizeof(blob), a, 1);
  });
  HOT_SITE("hot", trace_internal_write_blob_attachment_record_and_release_context(
                      c, &cat, "blob_attachment", blob, sizeof(blob)));
  if (i % 256 <= 1 || i >= ITERATIONS - 1) {
    trace_context_t* c = trace_acquire_context();
    if (c) {
      HOT_ARGS(i);
      trace_internal_write_kernel_object_record_and_release_context(c, self_pid, self_tid,
                                                                    "hot thread", a, 1);
    }
    c = trace_acquire_context();
    if (c)
      trace_internal_write_kernel_object_record_and_release_context(c, self_pid, 0, "hot process",
                                                                    NULL, 0);
  }
  trace_ticks_t now = trace_context_ticks_now();
  HOT_SITE("hot", {
    HOT_ARGS(i);
    trace_internal_write_vthread_duration_begin_event_record_and_release_context(
        c, &cat, "vduration", "vthread", 7, now, a, 1);
  });
  HOT_SITE("hot", {
    HOT_ARGS(i);
    trace_internal_write_vthread_duration_end_event_record_and_release_context(
        c, &cat, "vduration", "vthread", 7, now + 1, a, 1);
  });
  for (unsigned kind = 8; kind <= 10; kind++)
    HOT_SITE("hot", {
      HOT_ARGS(i);
      trace_internal_write_vthread_flow_event_record_and_release_context(
          c, &cat, "vflow", "vthread", 7, kind, i + 1, now, a, 1);
    });
}
#endif

/* What the archive must hold, each at least twice (the priming round outside
 * the filter, and inside it): record type, event type (-1: not an event),
 * name, and whether it carries the iteration "i". */
typedef struct expectation {
  uint32_t record_type;
  int event_type;
  const char* name;
  bool has_i;
  uint64_t seen, max_i;
} expectation_t;

static expectation_t expected[] = {
    {4, 0, "instant0", false, 0, 0},
    {4, 0, "instant", true, 0, 0},
    {4, 0, "types", true, 0, 0},
    {4, 1, "counter", true, 0, 0},
    {4, 4, "duration", HOT_PATH_MACROS, 0, 0},
    {4, 2, "begin_end", true, 0, 0},
    {4, 3, "begin_end", true, 0, 0},
    {4, 5, "async", true, 0, 0},
    {4, 6, "async", true, 0, 0},
    {4, 7, "async", true, 0, 0},
    {4, 8, "flow", true, 0, 0},
    {4, 9, "flow", true, 0, 0},
    {4, 10, "flow", true, 0, 0},
    {4, 2, "instaflow_begin", true, 0, 0},
    {4, 8, "instaflow_begin", false, 0, 0},
    {4, 3, "instaflow_begin", false, 0, 0},
    {4, 2, "instaflow_step", true, 0, 0},
    {4, 9, "instaflow_step", false, 0, 0},
    {4, 3, "instaflow_step", false, 0, 0},
    {4, 2, "instaflow_end", true, 0, 0},
    {4, 10, "instaflow_end", false, 0, 0},
    {4, 3, "instaflow_end", false, 0, 0},
    {5, -1, "blob", false, 0, 0},
    {15, -1, "blob_event", true, 0, 0},
    {15, -1, "blob_attachment", false, 0, 0},
    {7, -1, "hot thread", true, 0, 0},
    {7, -1, "hot process", false, 0, 0},
    {4, 2, "vduration", true, 0, 0},
    {4, 3, "vduration", true, 0, 0},
    {4, 8, "vflow", true, 0, 0},
    {4, 9, "vflow", true, 0, 0},
    {4, 10, "vflow", true, 0, 0},
};
enum { EXPECTED = sizeof(expected) / sizeof(expected[0]) };

static void note(uint32_t record_type, int event_type, const char* name,
                 const trace_reader_args_t* args) {
  for (size_t k = 0; k < EXPECTED; k++) {
    expectation_t* e = &expected[k];
    if (e->record_type != record_type || e->event_type != event_type || strcmp(e->name, name))
      continue;
    e->seen++;
    for (size_t a = 0; args && a < args->count; a++)
      if (strcmp(args->items[a].name.data, "i") == 0 && args->items[a].uint64_value > e->max_i)
        e->max_i = args->items[a].uint64_value;
    return;
  }
  TEST_FAIL("unexpected record type %u event %d \"%s\"", record_type, event_type, name);
}

/* ---- the hot thread ---- */

typedef struct hot {
  int allowed_fd;
  uint64_t pace_ns; /* busy-wait after each iteration, so that saves keep up */
  int filter_status;
  uint64_t iterations_done;
  tally_t tally;
  int done;  /* atomic: the hot section is over */
  int acked; /* atomic: the main thread has read the results */
} hot_t;

static void* hot_main(void* arg) {
  hot_t* hot = (hot_t*)arg;
  self_pid = (trace_koid_t)getpid();
  self_tid = (trace_koid_t)gettid();
  tally_t priming = {0};
  record_all(0, &priming); /* attaches the thread, registers every string */
  /* the interposers see the engine's calls: attaching locked a mutex */
  hot->filter_status = install_filter(hot->allowed_fd);
  if (hot->filter_status == 0) {
    /* the filter works: one deliberate syscall traps (and is then forgotten) */
    (void)syscall(SYS_getppid);
    in_hot = 1;
    for (uint64_t i = 1; i <= ITERATIONS; i++) {
      record_all(i, &hot->tally);
      hot->iterations_done = i;
      for (uint64_t t0 = trace_context_ticks_now();
           trace_context_ticks_now() - t0 < hot->pace_ns;) {
      }
    }
    in_hot = 0;
  }
  __atomic_store_n(&hot->done, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&hot->acked, __ATOMIC_ACQUIRE)) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#else
    __asm__ volatile("yield" ::: "memory");
#endif
  }
  /* the filter allows exit only: leave without libc's thread teardown (the
   * kernel still clears the tid, so pthread_join returns) */
  for (;;) syscall(SYS_exit, 0);
  return NULL;
}

static const char* mode_name(trace_buffering_mode_t mode) {
  return mode == TRACE_BUFFERING_MODE_ONESHOT    ? "oneshot"
         : mode == TRACE_BUFFERING_MODE_CIRCULAR ? "circular"
                                                 : "streaming";
}

static void run(trace_buffering_mode_t mode, size_t buffer_bytes) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, mode, buffer_bytes, "hot"), 0);
  for (size_t k = 0; k < EXPECTED; k++) expected[k].seen = expected[k].max_i = 0;
  memset(counts, 0, sizeof(counts));
  trap_count = 0;
  wake_fd = engine__sessions[0].wake_fd;
  ASSERT_TRUE(wake_fd >= 0);

  hot_t hot = {0};
  hot.allowed_fd = mode == TRACE_BUFFERING_MODE_STREAMING ? wake_fd : -1;
  hot.pace_ns = mode == TRACE_BUFFERING_MODE_STREAMING ? 20000 : 0;
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, NULL, hot_main, &hot), 0);
  for (int ms = 0; !__atomic_load_n(&hot.done, __ATOMIC_ACQUIRE); ms++) {
    if (ms > 60000) TEST_FAIL("%s: the hot thread did not finish in 60 s", mode_name(mode));
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  int traps = __atomic_load_n(&trap_count, __ATOMIC_ACQUIRE);
  uint64_t seen[C_COUNT];
  for (int c = 0; c < C_COUNT; c++) seen[c] = __atomic_load_n(&counts[c], __ATOMIC_RELAXED);
  __atomic_store_n(&hot.acked, 1, __ATOMIC_RELEASE);
  ASSERT_EQ(pthread_join(thread, NULL), 0);
  if (hot.filter_status != 0) TEST_FAIL("seccomp filter refused: %s", strerror(-hot.filter_status));

  /* the probe syscall trapped: the filter is live; nothing else did */
  ASSERT_TRUE(traps >= 1 && trap_nr[0] == SYS_getppid);
  for (int k = 1; k < traps && k < MAX_TRAPS; k++)
    fprintf(stderr, "%s: syscall %d made in the hot section at %p\n", mode_name(mode), trap_nr[k],
            trap_addr[k]);
  ASSERT_EQ(traps, 1);
  int failed = 0;
  for (int c = 0; c < C_COUNT; c++)
    if (c != C_WAKE_WRITE && seen[c] != 0) {
      fprintf(stderr, "%s: %llu calls to %s in the hot section\n", mode_name(mode),
              (unsigned long long)seen[c], counter_names[c]);
      failed = 1;
    }
  ASSERT_EQ(failed, 0);
  ASSERT_EQ(hot.iterations_done, ITERATIONS);
  ASSERT_EQ(hot.tally.enabled, ITERATIONS);
  ASSERT_EQ(hot.tally.category_enabled, ITERATIONS);
  ASSERT_EQ(hot.tally.category_disabled, 0u);
  ASSERT_EQ(hot.tally.nonces, ITERATIONS);

  harness_stop(&h);
  trace_engine_stats_t* st = &h.stats;
  switch (mode) {
    case TRACE_BUFFERING_MODE_ONESHOT:
      ASSERT_TRUE(st->records_dropped > 0); /* it filled inside the hot section */
      ASSERT_EQ(seen[C_WAKE_WRITE], 0u);
      break;
    case TRACE_BUFFERING_MODE_CIRCULAR:
      ASSERT_TRUE(st->wrapped_count >= 10);
      ASSERT_EQ(st->records_dropped, 0u);
      ASSERT_EQ(seen[C_WAKE_WRITE], 0u);
      break;
    case TRACE_BUFFERING_MODE_STREAMING:
      /* one wake-up per switch, each switch saved */
      ASSERT_TRUE(st->wrapped_count >= 10);
      ASSERT_EQ(seen[C_WAKE_WRITE], st->wrapped_count);
      ASSERT_EQ(h.saves, st->wrapped_count);
      break;
  }

  /* the records are really there */
  size_t length;
  const uint8_t* fxt = harness_archive(&h, &length);
  trace_reader_t* r = trace_reader_open_memory(fxt, length, NULL);
  ASSERT_TRUE(r != NULL);
  trace_record_t rec;
  int status;
  while ((status = trace_reader_next(r, &rec)) != TRACE_READ_END) {
    if (status != TRACE_READ_RECORD)
      TEST_FAIL("%s: record at %llu: %s", mode_name(mode),
                (unsigned long long)trace_reader_error(r).offset, trace_reader_error(r).message);
    switch (rec.type) {
      case 4:
        ASSERT_STREQ(rec.event.category.data, "hot");
        note(4, (int)rec.event.event_type, rec.event.name.data, &rec.event.args);
        break;
      case 5:
        note(5, -1, rec.blob.name.data, NULL);
        break;
      case 15:
        ASSERT_STREQ(rec.large.category.data, "hot");
        note(15, -1, rec.large.name.data, rec.large.blob_format == 0 ? &rec.large.args : NULL);
        break;
      case 7:
        if (rec.kernel_object.name.length && strncmp(rec.kernel_object.name.data, "hot ", 4) == 0)
          note(7, -1, rec.kernel_object.name.data, &rec.kernel_object.args);
        break;
      default:
        break;
    }
  }
  ASSERT_TRUE(!trace_reader_truncated(r));
  trace_reader_close(r);
  for (size_t k = 0; k < EXPECTED; k++) {
    expectation_t* e = &expected[k];
    if (e->seen < 2 || (e->has_i && e->max_i < 1))
      TEST_FAIL(
          "%s: %s (record %u, event %d): %llu records, largest i %llu: not recorded in the "
          "filtered section",
          mode_name(mode), e->name, e->record_type, e->event_type, (unsigned long long)e->seen,
          (unsigned long long)e->max_i);
  }
  printf(
      "%-9s ok: %d iterations in the filtered section, %llu records written, %llu dropped, "
      "%u switches, %llu wake-ups\n",
      mode_name(mode), ITERATIONS, (unsigned long long)st->records_written,
      (unsigned long long)st->records_dropped, st->wrapped_count,
      (unsigned long long)seen[C_WAKE_WRITE]);
  harness_free(&h);
}

int main(void) {
  (void)harness_release_saves;
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGSYS, &sa, NULL), 0);
  /* the interposers are live for the engine: a thread's first record (its
   * attach) locks the engine's mutex and allocates */
  {
    harness_t h;
    ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 64 * 1024, NULL), 0);
    memset(counts, 0, sizeof(counts));
    in_hot = 1;
    trace_string_ref_t cat;
    trace_context_t* c = trace_acquire_context_for_category("hot", &cat);
    in_hot = 0;
    ASSERT_TRUE(c != NULL);
    trace_release_context(c);
    ASSERT_TRUE(counts[C_LOCK] >= 1 && counts[C_UNLOCK] >= 1);
    ASSERT_TRUE(counts[C_ALIGNED] + counts[C_MALLOC] + counts[C_CALLOC] >= 1);
    harness_stop(&h);
    harness_free(&h);
  }
  const char* clock = getenv("FXTRACE_CLOCK");
  printf("clock: %s; events through %s\n", clock && *clock ? clock : "default",
         HOT_PATH_MACROS ? "the <trace/event.h> macros" : "the event_helpers.h functions");
  run(TRACE_BUFFERING_MODE_ONESHOT, 256 * 1024);
  run(TRACE_BUFFERING_MODE_CIRCULAR, 256 * 1024);
  run(TRACE_BUFFERING_MODE_STREAMING, 512 * 1024);
  printf("hot path: ok\n");
  return 0;
}
#endif /* HOT_PATH_SANITIZER */
