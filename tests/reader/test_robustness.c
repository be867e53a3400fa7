/* Robustness of the reader on damaged input, using the sample archive (every
 * record and argument type):
 *  - every truncation of it yields exactly the records before the cut, then
 *    END on a record boundary or a "truncated" ERROR inside a record;
 *  - 10,000 deterministic bit-flipped copies terminate, return only valid
 *    results with sane errors, and every borrowed byte is readable;
 *  - a few hundred of them give the same results through an fd (a file and
 *    a pipe) and a FILE* as from memory.
 * Inputs are copied into exactly-sized heap blocks so that ASan flags any
 * read past their end. */
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../fuzz/record_touch.h"
#include "test.h"
#include "trace-reader/reader.h"
#include "trace/sample.h"

/* One result of trace_reader_next(): what is compared between reads. */
typedef struct result {
  int rc;
  uint64_t offset; /* record offset for RECORD, error offset otherwise */
  uint32_t type;
  uint64_t size_words;
} result_t;

typedef struct results {
  result_t* items;
  size_t count, capacity;
  bool truncated;
} results_t;

static void push(results_t* out, result_t r) {
  if (out->count == out->capacity) {
    out->capacity = out->capacity ? out->capacity * 2 : 256;
    out->items = realloc(out->items, out->capacity * sizeof(result_t));
    ASSERT_TRUE(out->items != NULL);
  }
  out->items[out->count++] = r;
}

/* Reads to the end, checking what holds for any input of `size` bytes; the
 * results (ending with END or ERROR) go to *out. */
static void read_all(trace_reader_t* r, uint64_t size, results_t* out) {
  ASSERT_TRUE(r != NULL);
  out->count = 0;
  /* Each record consumes at least 8 bytes, so this bounds a correct reader. */
  uint64_t max_calls = size / 8 + 2;
  for (uint64_t calls = 0;; calls++) {
    ASSERT_TRUE(calls < max_calls);
    trace_record_t rec;
    int rc = trace_reader_next(r, &rec);
    result_t res = {rc, 0, 0, 0};
    if (rc == TRACE_READ_RECORD) {
      ASSERT_TRUE(rec.offset + rec.size_words * 8 <= size);
      touch_record(&rec);
      res.offset = rec.offset;
      res.type = rec.type;
      res.size_words = rec.size_words;
    } else if (rc == TRACE_READ_SKIPPED || rc == TRACE_READ_ERROR) {
      trace_reader_error_t e = trace_reader_error(r);
      ASSERT_TRUE(e.message != NULL && e.message[0] != '\0');
      ASSERT_TRUE(e.offset <= size);
      res.offset = e.offset;
    } else {
      ASSERT_EQ(rc, TRACE_READ_END);
    }
    push(out, res);
    if (rc == TRACE_READ_END || rc == TRACE_READ_ERROR) {
      ASSERT_EQ(trace_reader_next(r, &rec), rc); /* final results stick */
      out->truncated = trace_reader_truncated(r);
      if (rc == TRACE_READ_END) ASSERT_TRUE(!out->truncated);
      break;
    }
  }
  trace_reader_close(r);
}

static void read_memory(const unsigned char* data, size_t size, bool require_magic,
                        results_t* out) {
  /* An exact-size copy (malloc(0) may return NULL: use one byte then). */
  unsigned char* copy = malloc(size ? size : 1);
  ASSERT_TRUE(copy != NULL);
  memcpy(copy, data, size);
  trace_reader_options_t opt = {.require_magic = require_magic};
  read_all(trace_reader_open_memory(copy, size, &opt), size, out);
  free(copy);
}

static void assert_same_results(const results_t* a, const results_t* b) {
  ASSERT_EQ(a->count, b->count);
  for (size_t i = 0; i < a->count; i++) {
    ASSERT_EQ(a->items[i].rc, b->items[i].rc);
    ASSERT_EQ(a->items[i].offset, b->items[i].offset);
    ASSERT_EQ(a->items[i].type, b->items[i].type);
    ASSERT_EQ(a->items[i].size_words, b->items[i].size_words);
  }
  ASSERT_EQ(a->truncated, b->truncated);
}

static void test_truncations(const unsigned char* data, size_t size) {
  results_t full = {0}, cut = {0};
  read_memory(data, size, true, &full);
  ASSERT_TRUE(full.count > 10);
  ASSERT_EQ(full.items[full.count - 1].rc, TRACE_READ_END);
  for (size_t i = 0; i + 1 < full.count; i++) ASSERT_EQ(full.items[i].rc, TRACE_READ_RECORD);
  size_t records = full.count - 1;

  for (int magic = 0; magic <= 1; magic++) {
    size_t whole = 0; /* records wholly before the cut */
    for (size_t len = 0; len <= size; len++) {
      while (whole < records && full.items[whole].offset + full.items[whole].size_words * 8 <= len)
        whole++;
      read_memory(data, len, magic, &cut);
      ASSERT_EQ(cut.count, whole + 1);
      for (size_t i = 0; i < whole; i++) {
        ASSERT_EQ(cut.items[i].rc, TRACE_READ_RECORD);
        ASSERT_EQ(cut.items[i].offset, full.items[i].offset);
        ASSERT_EQ(cut.items[i].type, full.items[i].type);
      }
      const result_t* last = &cut.items[whole];
      bool boundary = whole == records || full.items[whole].offset == len;
      if (len == 0 && magic) {
        /* Nothing at all is not an archive, and not a truncated one either. */
        ASSERT_EQ(last->rc, TRACE_READ_ERROR);
        ASSERT_TRUE(!cut.truncated);
      } else if (boundary) {
        ASSERT_EQ(last->rc, TRACE_READ_END);
      } else {
        if (last->rc != TRACE_READ_ERROR || !cut.truncated)
          TEST_FAIL("cut at %zu (inside the record at %" PRIu64 "): rc %d, truncated %d", len,
                    full.items[whole].offset, last->rc, cut.truncated);
        ASSERT_EQ(last->offset, full.items[whole].offset);
      }
    }
  }
  free(full.items);
  free(cut.items);
}

/* xorshift64*: deterministic across platforms, unlike rand(). */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rng(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545f4914f6cdd1du;
}

/* The same bytes through a temporary file: its fd and a FILE* on it. */
static void read_via_file(const unsigned char* data, size_t size, bool magic,
                          const results_t* expected) {
  FILE* f = tmpfile();
  ASSERT_TRUE(f != NULL);
  ASSERT_EQ(fwrite(data, 1, size, f), size);
  ASSERT_EQ(fflush(f), 0);
  trace_reader_options_t opt = {.require_magic = magic};
  results_t got = {0};
  ASSERT_EQ(lseek(fileno(f), 0, SEEK_SET), 0);
  read_all(trace_reader_open_fd(fileno(f), &opt), size, &got);
  assert_same_results(expected, &got);
  rewind(f);
  read_all(trace_reader_open_file(f, &opt), size, &got);
  assert_same_results(expected, &got);
  fclose(f);
  free(got.items);
}

/* The same bytes through a pipe, written by a child in odd-sized pieces so
 * that reads come back short. */
static void read_via_pipe(const unsigned char* data, size_t size, bool magic,
                          const results_t* expected) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  ASSERT_TRUE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    for (size_t done = 0; done < size;) {
      size_t n = size - done < 1000 ? size - done : 1000;
      ssize_t w = write(fds[1], data + done, n);
      if (w <= 0) _exit(1);
      done += (size_t)w;
    }
    _exit(0);
  }
  close(fds[1]);
  trace_reader_options_t opt = {.require_magic = magic};
  results_t got = {0};
  read_all(trace_reader_open_fd(fds[0], &opt), size, &got);
  /* The reader may stop early on an error: drain so the child can finish. */
  char sink[4096];
  while (read(fds[0], sink, sizeof(sink)) > 0) {
  }
  close(fds[0]);
  int status;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_same_results(expected, &got);
  free(got.items);
}

static void test_bit_flips(const unsigned char* data, size_t size) {
  unsigned char* copy = malloc(size);
  ASSERT_TRUE(copy != NULL);
  results_t res = {0};
  size_t outcomes[3] = {0}; /* ended cleanly, ended in error, had skips */
  for (int i = 0; i < 10000; i++) {
    memcpy(copy, data, size);
    int flips = 1 + (int)(rng() % 8);
    for (int f = 0; f < flips; f++) {
      uint64_t bit = rng() % (size * 8);
      copy[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    }
    bool magic = i % 2 == 0;
    read_memory(copy, size, magic, &res);
    outcomes[res.items[res.count - 1].rc == TRACE_READ_END ? 0 : 1]++;
    for (size_t k = 0; k < res.count; k++)
      if (res.items[k].rc == TRACE_READ_SKIPPED) {
        outcomes[2]++;
        break;
      }
    if (i % 40 == 0) read_via_file(copy, size, magic, &res);
    if (i % 40 == 20) read_via_pipe(copy, size, magic, &res);
  }
  printf("bit flips: %zu ended cleanly, %zu in an error, %zu with skipped records\n", outcomes[0],
         outcomes[1], outcomes[2]);
  free(res.items);
  free(copy);
}

int main(void) {
  fxt_buffer_t b = {0};
  ASSERT_EQ(sample_archive__build(&b, 1), 0);
  const unsigned char* data = (const unsigned char*)b.words;
  size_t size = b.count * 8;
  printf("sample archive: %zu bytes\n", size);

  test_truncations(data, size);

  /* The clean fd paths agree with memory before any damage. */
  results_t full = {0};
  read_memory(data, size, true, &full);
  read_via_file(data, size, true, &full);
  read_via_pipe(data, size, true, &full);
  free(full.items);

  test_bit_flips(data, size);
  fxt_buffer_free(&b);
  return 0;
}
