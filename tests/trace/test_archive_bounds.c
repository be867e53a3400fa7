/* Issue 18, point 3: `trace` bounds everything an archive controls.
 *
 *   test_archive_bounds PATH_TO_TRACE
 *
 * 1. Bombs: a zstd and a gzip file holding a raw trace buffer's magic and
 *    600 MB of zeros (a few KB compressed) are rejected by `trace dump` and
 *    `trace recover` with the header's error, in less than 64 MiB of peak
 *    RSS (measured with wait4; not checked under a sanitizer, whose runtime
 *    has a large RSS of its own: detected as test_hot_path.c does). So are
 *    a usable header whose buffer is 1 GiB of zeros, and a small buffer
 *    whose header claims 600 MB of streamed saves that are zeros: the
 *    saves stream, nothing buffers them.
 * 2. A typed-event format whose print format asks for huge field widths
 *    and precisions: `trace dump` of an archive of such events costs at
 *    most 100 times the CPU time of the same archive with plain formats,
 *    plus two seconds (a generous bound on CPU time, not wall-clock time;
 *    the child gets RLIMIT_CPU so that an unbounded renderer fails fast).
 * 3. Rendered text is escaped as string arguments are: a "%c" of 0 and an
 *    escape sequence in a string come out as \x00 and \x1b, nothing is cut
 *    at the NUL, and no control byte reaches the output. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "engine/buffer_header.h"
#include "fxt/fxt_buffer.h"
#include "fxt/fxt_encode.h"
#include "test.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

enum { MAX_RSS_KB = 64 * 1024, BOMB_ZEROS = 600 * 1000 * 1000 };

static const char* g_trace;
static char g_dir[] = "/tmp/fxtrace-bounds-XXXXXX";

static void path_of(char* out, size_t cap, const char* name) {
  snprintf(out, cap, "%s/%s", g_dir, name);
}

typedef struct result {
  int status; /* exit status, or 128 + signal */
  long max_rss_kb;
  double cpu_seconds;
} result_t;

/* Runs `trace ARGS...` (NULL-terminated) with stdout and stderr to files of
 * the test directory; `cpu_limit` seconds of CPU (0: none). */
static result_t run_trace(const char* const* args, const char* out_name, const char* err_name,
                          unsigned cpu_limit) {
  char out[512], err[512];
  path_of(out, sizeof(out), out_name);
  path_of(err, sizeof(err), err_name);
  const char* argv[16];
  size_t n = 0;
  argv[n++] = g_trace;
  for (size_t i = 0; args[i] && n < 15; i++) argv[n++] = args[i];
  argv[n] = NULL;
  pid_t pid = fork();
  ASSERT_TRUE(pid >= 0);
  if (pid == 0) {
    int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(127);
    if (cpu_limit) {
      struct rlimit rl = {cpu_limit, cpu_limit + 1};
      setrlimit(RLIMIT_CPU, &rl);
    }
    execv(g_trace, (char* const*)argv);
    _exit(127);
  }
  int status;
  struct rusage usage;
  pid_t got;
  do got = wait4(pid, &status, 0, &usage);
  while (got < 0 && errno == EINTR);
  ASSERT_TRUE(got == pid);
  result_t r;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.max_rss_kb = usage.ru_maxrss;
  r.cpu_seconds = (double)usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 +
                  (double)usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
  return r;
}

/* The whole of a file of the test directory, NUL-terminated; *size its length. */
static char* slurp(const char* name, size_t* size) {
  char p[512];
  path_of(p, sizeof(p), name);
  FILE* f = fopen(p, "rb");
  ASSERT_TRUE(f != NULL);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* data = malloc((size_t)n + 1);
  ASSERT_TRUE(data && fread(data, 1, (size_t)n, f) == (size_t)n);
  data[n] = '\0';
  fclose(f);
  if (size) *size = (size_t)n;
  return data;
}

static void write_file(const char* name, const void* data, size_t size) {
  char p[512];
  path_of(p, sizeof(p), name);
  FILE* f = fopen(p, "wb");
  ASSERT_TRUE(f && fwrite(data, 1, size, f) == size && fclose(f) == 0);
}

/* ---- 1. bombs ---- */

static unsigned char g_zeros[1 << 20];

/* Compresses `head` then `zeros` zero bytes into the file `name`, streaming
 * (the test itself never holds the zeros). */
static void write_zstd_bomb(const char* name, const void* head, size_t head_size, uint64_t zeros) {
  char p[512];
  path_of(p, sizeof(p), name);
  FILE* f = fopen(p, "wb");
  ASSERT_TRUE(f != NULL);
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
  static unsigned char out[1 << 16];
  for (uint64_t left = zeros + head_size; left > 0 || head_size;) {
    ZSTD_inBuffer in;
    if (head_size) {
      in = (ZSTD_inBuffer){head, head_size, 0};
      left -= head_size;
      head_size = 0;
    } else {
      size_t step = left < sizeof(g_zeros) ? (size_t)left : sizeof(g_zeros);
      in = (ZSTD_inBuffer){g_zeros, step, 0};
      left -= step;
    }
    ZSTD_EndDirective mode = left == 0 ? ZSTD_e_end : ZSTD_e_continue;
    for (;;) {
      ZSTD_outBuffer o = {out, sizeof(out), 0};
      size_t rest = ZSTD_compressStream2(c, &o, &in, mode);
      ASSERT_TRUE(!ZSTD_isError(rest));
      ASSERT_TRUE(fwrite(out, 1, o.pos, f) == o.pos);
      if (in.pos == in.size && (mode == ZSTD_e_continue || rest == 0)) break;
    }
  }
  ZSTD_freeCCtx(c);
  ASSERT_TRUE(fclose(f) == 0);
}

static void write_gzip_bomb(const char* name, const void* head, size_t head_size, uint64_t zeros) {
  char p[512];
  path_of(p, sizeof(p), name);
  FILE* f = fopen(p, "wb");
  ASSERT_TRUE(f != NULL);
  z_stream z;
  memset(&z, 0, sizeof(z));
  ASSERT_TRUE(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  static unsigned char out[1 << 16];
  for (uint64_t left = zeros + head_size; left > 0 || head_size;) {
    if (head_size) {
      z.next_in = (Bytef*)head;
      z.avail_in = (uInt)head_size;
      left -= head_size;
      head_size = 0;
    } else {
      size_t step = left < sizeof(g_zeros) ? (size_t)left : sizeof(g_zeros);
      z.next_in = g_zeros;
      z.avail_in = (uInt)step;
      left -= step;
    }
    int flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
    int rc;
    do {
      z.next_out = out;
      z.avail_out = sizeof(out);
      rc = deflate(&z, flush);
      ASSERT_TRUE(rc != Z_STREAM_ERROR);
      size_t made = sizeof(out) - z.avail_out;
      ASSERT_TRUE(fwrite(out, 1, made, f) == made);
    } while (z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  }
  deflateEnd(&z);
  ASSERT_TRUE(fclose(f) == 0);
}

static void check_rss(const char* what, const result_t* r) {
  printf("%s: exit %d, peak RSS %ld KiB\n", what, r->status, r->max_rss_kb);
#ifdef UNDER_SANITIZER
  (void)r;
#else
  ASSERT_MSG(r->max_rss_kb < MAX_RSS_KB, "%s: peak RSS %ld KiB, not under %d KiB", what,
             r->max_rss_kb, MAX_RSS_KB);
#endif
}

/* A header that buffer_scan__header accepts: oneshot or streaming. */
static trace_buffer_header_t usable_header(unsigned mode, uint64_t total) {
  trace_buffer_geometry_t g;
  ASSERT_TRUE(buffer__compute_geometry(mode, total, &g) == 0);
  trace_buffer_header_t h;
  buffer_header__init(&h, mode, total, &g);
  return h;
}

static void check_bombs(void) {
  uint64_t magic = TRACE_BUFFER_HEADER_MAGIC;
  write_zstd_bomb("bomb.zst", &magic, sizeof(magic), BOMB_ZEROS);
  write_gzip_bomb("bomb.gz", &magic, sizeof(magic), BOMB_ZEROS);
  static const char* const names[] = {"bomb.zst", "bomb.gz"};
  for (size_t i = 0; i < 2; i++) {
    char in[512], out[512];
    path_of(in, sizeof(in), names[i]);
    path_of(out, sizeof(out), "bomb-recovered.fxt");
    const char* dump[] = {"dump", in, NULL};
    result_t r = run_trace(dump, "out", "err", 0);
    char* err = slurp("err", NULL);
    ASSERT_MSG(r.status == 1 && strstr(err, "unknown buffer version"), "dump %s: exit %d: %s",
               names[i], r.status, err);
    free(err);
    check_rss(names[i], &r);
    const char* recover[] = {"recover", in, "-o", out, NULL};
    r = run_trace(recover, "out", "err", 0);
    err = slurp("err", NULL);
    ASSERT_MSG(r.status == 1 && strstr(err, "unknown buffer version"), "recover %s: exit %d: %s",
               names[i], r.status, err);
    free(err);
    ASSERT_MSG(access(out, F_OK) != 0, "recover %s left an output", names[i]);
    check_rss(names[i], &r);
  }
  /* a usable header: a 1 GiB buffer of zeros (nothing in it) */
  trace_buffer_header_t h = usable_header(0, UINT64_C(1) << 30);
  write_zstd_bomb("empty-1g.zst", &h, sizeof(h), (UINT64_C(1) << 30) - sizeof(h));
  char in[512];
  path_of(in, sizeof(in), "empty-1g.zst");
  const char* dump[] = {"dump", in, NULL};
  result_t r = run_trace(dump, "out", "err", 0);
  ASSERT_MSG(r.status == 0, "dump of an empty 1 GiB buffer: exit %d", r.status);
  check_rss("empty 1 GiB buffer", &r);
  /* a 4 KiB streaming buffer whose saves are 600 MB of zeros */
  h = usable_header(2, 4096);
  h.streamed_bytes = BOMB_ZEROS;
  unsigned char head[4096] = {0};
  memcpy(head, &h, sizeof(h));
  write_zstd_bomb("zero-saves.zst", head, sizeof(head), BOMB_ZEROS);
  path_of(in, sizeof(in), "zero-saves.zst");
  r = run_trace(dump, "out", "err", 0);
  char* err = slurp("err", NULL);
  ASSERT_MSG(r.status == 0 || r.status == 1, "dump of zero saves: exit %d: %s", r.status, err);
  ASSERT_TRUE(strstr(err, "Sanitizer") == NULL);
  free(err);
  check_rss("600 MB of zero saves", &r);
}

/* ---- 2, 3: typed events ---- */

static trace_arg_t arg(const char* name, trace_arg_value_t v) {
  return trace_make_arg(trace_make_inline_c_string_ref(name), v);
}

/* An archive with the format of c:NAME (print format `print_fmt`) and
 * `events` events of it with arguments v (int32), s (string) and d (double),
 * written to the test directory as `file`. */
/* The value of every event's double argument "d". */
static double g_double = 2.5;

static void write_typed(const char* file, const char* name, const char* print_fmt, int32_t v,
                        const char* s, size_t events) {
  fxt_buffer_t b = {0};
  fxt_write_magic_record(fxt_buffer_reserve(&b, 1));
  size_t words = fxt_provider_info_words(1);
  fxt_write_provider_info_record(fxt_buffer_reserve(&b, words), 1, "p", 1);
  char text[4096];
  int n = snprintf(text, sizeof(text),
                   "category: c\nname: %s\nID: 1\nformat:\n"
                   "\tfield:int v;\toffset:8;\tsize:4;\tsigned:1;\n"
                   "\tfield:__data_loc char[] s;\toffset:12;\tsize:4;\tsigned:0;\n"
                   "\tfield:double d;\toffset:16;\tsize:8;\tsigned:1;\n\n"
                   "print fmt: %s\n",
                   name, print_fmt);
  ASSERT_TRUE(n > 0 && (size_t)n < sizeof(text));
  trace_string_ref_t blob_name = trace_make_inline_c_string_ref("trace_event_format");
  words = fxt_blob_record_words(&blob_name, (size_t)n);
  fxt_write_blob_record(fxt_buffer_reserve(&b, words), words, 1, &blob_name, text, (size_t)n);
  trace_thread_ref_t thread = trace_make_inline_thread_ref(10, 11);
  trace_string_ref_t cat = trace_make_inline_c_string_ref("c");
  trace_string_ref_t nm = trace_make_inline_c_string_ref(name);
  trace_arg_t args[] = {
      arg("v", trace_make_int32_arg_value(v)),
      arg("s", trace_make_string_arg_value(trace_make_inline_c_string_ref(s))),
      arg("d", trace_make_double_arg_value(g_double)),
  };
  for (size_t i = 0; i < events; i++) {
    words = fxt_event_record_words(0, &thread, &cat, &nm, args, 3);
    fxt_write_event_record(fxt_buffer_reserve(&b, words), words, 0, 1000 + i, &thread, &cat, &nm,
                           args, 3, 0);
  }
  write_file(file, b.words, b.count * 8);
  fxt_buffer_free(&b);
}

static void check_format_cost(void) {
  enum { EVENTS = 20000 };
  write_typed("plain.fxt", "n",
              "\"v=%d p=%d s=%s t=%s f=%f x=%x\", REC->v, REC->v, __get_str(s), __get_str(s), "
              "REC->d, REC->v",
              3, "hello", EVENTS);
  write_typed("crafted.fxt", "n",
              "\"v=%2147483647d p=%.2147483647d s=%-2147483647s t=%.999999999s "
              "f=%2147483647.2147483647f x=%99999999999999999999x\", REC->v, REC->v, "
              "__get_str(s), __get_str(s), REC->d, REC->v",
              3, "hello", EVENTS);
  char plain[512], crafted[512];
  path_of(plain, sizeof(plain), "plain.fxt");
  path_of(crafted, sizeof(crafted), "crafted.fxt");
  const char* dump_plain[] = {"dump", plain, NULL};
  const char* dump_crafted[] = {"dump", crafted, NULL};
  result_t p = run_trace(dump_plain, "plain.txt", "err", 60);
  ASSERT_MSG(p.status == 0, "dump of the plain archive: exit %d", p.status);
  unsigned budget = (unsigned)(100 * p.cpu_seconds + 2.0) + 1;
  result_t c = run_trace(dump_crafted, "crafted.txt", "err", budget);
  printf("dump: plain %.3f s of CPU, crafted %.3f s (budget %u s)\n", p.cpu_seconds, c.cpu_seconds,
         budget);
  ASSERT_MSG(c.status == 0, "dump of the crafted archive: exit %d (%d: out of CPU time)", c.status,
             128 + SIGXCPU);
  ASSERT_MSG(c.cpu_seconds <= 100 * p.cpu_seconds + 2.0,
             "dump of the crafted archive took %.3f s of CPU, the plain one %.3f s", c.cpu_seconds,
             p.cpu_seconds);
  /* Many wide conversions of a denormal double (each thousands of bytes of
   * multi-precision work in printf): the text is cut after the first few,
   * and the rest are not converted at all. */
  char many[1024];
  size_t m = (size_t)snprintf(many, sizeof(many), "\"");
  for (int i = 0; i < 32; i++) m += (size_t)snprintf(many + m, sizeof(many) - m, "%%4096.4096f");
  m += (size_t)snprintf(many + m, sizeof(many) - m, "\"");
  for (int i = 0; i < 32; i++) m += (size_t)snprintf(many + m, sizeof(many) - m, ", REC->d");
  g_double = 4.9406564584124654e-324;
  write_typed("many.fxt", "n", many, 3, "hello", EVENTS);
  g_double = 2.5;
  char many_path[512];
  path_of(many_path, sizeof(many_path), "many.fxt");
  const char* dump_many[] = {"dump", many_path, NULL};
  result_t w = run_trace(dump_many, "many.txt", "err", budget);
  printf("dump: 32 wide conversions of a denormal per event: %.3f s of CPU\n", w.cpu_seconds);
  ASSERT_MSG(w.status == 0, "dump of the many-conversion archive: exit %d", w.status);
  ASSERT_MSG(w.cpu_seconds <= 100 * p.cpu_seconds + 2.0,
             "dump of the many-conversion archive took %.3f s of CPU, the plain one %.3f s",
             w.cpu_seconds, p.cpu_seconds);
  /* every event line is there, each at most TRACE_FORMAT_MAX_TEXT (8 KiB) of text plus its head */
  size_t size;
  char* text = slurp("crafted.txt", &size);
  size_t events = 0;
  for (char* line = text; line < text + size;) {
    char* nl = memchr(line, '\n', (size_t)(text + size - line));
    ASSERT_TRUE(nl != NULL);
    if (strncmp(line, "event", 5) == 0) {
      events++;
      ASSERT_MSG(nl - line < 8192 + 512, "an event line of %zu bytes", (size_t)(nl - line));
      ASSERT_TRUE(memmem(line, (size_t)(nl - line), " n: v=", 6) != NULL);
      ASSERT_TRUE(memmem(line, (size_t)(nl - line), "[...]", 5) != NULL);
    }
    line = nl + 1;
  }
  ASSERT_EQ(events, EVENTS);
  free(text);
}

static void check_escaping(void) {
  /* the format's name (the event's) holds an ESC too */
  write_typed("escape.fxt", "n\x1b[2J", "\"x=%c|y=%s|%c\", 0, __get_str(s), 7", 0,
              "a\x1b[31mred\x7f\"q\"\\", 1);
  char in[512];
  path_of(in, sizeof(in), "escape.fxt");
  const char* dump[] = {"dump", in, NULL};
  result_t r = run_trace(dump, "escape.txt", "err", 0);
  ASSERT_EQ(r.status, 0);
  size_t size;
  char* text = slurp("escape.txt", &size);
  for (size_t i = 0; i < size; i++) {
    unsigned char ch = (unsigned char)text[i];
    ASSERT_MSG(ch == '\n' || (ch >= 0x20 && ch != 0x7f), "a raw control byte 0x%02x in: %s", ch,
               text);
  }
  static const char kWant[] = " n\\x1b[2J: x=\\x00|y=a\\x1b[31mred\\x7f\\\"q\\\"\\\\|\\x07\n";
  ASSERT_MSG(strstr(text, kWant) != NULL, "no line ending in '%s' in:\n%s", kWant, text);
  free(text);
}

static void remove_dir(void) {
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "%s '%s'", getenv("KEEP") ? "true" : "rm -rf", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", g_dir);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PATH_TO_TRACE\n", argv[0]);
    return 2;
  }
  g_trace = argv[1];
  ASSERT_TRUE(mkdtemp(g_dir) != NULL);
  check_escaping();
  check_format_cost();
  check_bombs();
  remove_dir();
  printf("ok\n");
  return 0;
}
