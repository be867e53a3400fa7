/* Not part of the public API: a small archive with typed events and their
 * format records (docs/event-formats.md), built with the FXT encoder. The
 * reader's format tests and the fuzzer's seed corpus (fuzz/make_corpus.c)
 * share it. Formats: a TRACE_EVENT()-style one, a kernel-style one whose
 * print format holds C expressions (the fallback), and helpers. */
#ifndef FXTRACE_READER_TYPED_SAMPLE_H_
#define FXTRACE_READER_TYPED_SAMPLE_H_

#include <string.h>

#include "fxt/fxt_buffer.h"
#include "fxt/fxt_encode.h"

static const char* const typed_sample__formats[] = {
    "category: net\nname: net_send\nID: 1\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
    "\tfield:int fd;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\tfield:size_t len;\toffset:16;\tsize:8;\tsigned:0;\n"
    "\tfield:__data_loc char[] peer;\toffset:12;\tsize:4;\tsigned:0;\n\n"
    "print fmt: \"fd=%d peer=%s len=%zu\", REC->fd, __get_str(peer), REC->len\n",
    "category: kernel:sched\nname: sched_switch\nID: 316\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n"
    "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:long prev_state;\toffset:24;\tsize:8;\tsigned:1;\n\n"
    "print fmt: \"prev_comm=%s prev_state=%s%s\", REC->prev_comm, (REC->prev_state & "
    "((((0x00000000 "
    "+ 1) << 1) - 1)) ? __print_flags(REC->prev_state & 3, \"|\", { 0x00000001, \"S\" }, { "
    "0x00000002, \"D\" }) : \"R\", REC->prev_state & 4 ? \"+\" : \"\"\n",
    "category: net\nname: net_flags\nID: 2\nformat:\n\n"
    "\tfield:unsigned int flags;\toffset:8;\tsize:4;\tsigned:0;\n"
    "\tfield:int state;\toffset:12;\tsize:4;\tsigned:1;\n"
    "\tfield:__data_loc u8[] buf;\toffset:16;\tsize:4;\tsigned:0;\n"
    "\tfield:int quad[2];\toffset:20;\tsize:8;\tsigned:1;\n\n"
    "print fmt: \"flags=%s state=%s buf=%s q=%d\", __print_flags(REC->flags, \"|\", {1, \"A\"}, "
    "{2, \"B\"}), __print_symbolic(REC->state, {0, \"zero\"}, {1, \"one\"}), "
    "__print_hex(__get_dynamic_array(buf), __get_dynamic_array_len(buf)), "
    "__get_dynamic_array_len(buf)\n",
};

static inline trace_arg_t typed_sample__arg(const char* name, trace_arg_value_t v) {
  return trace_make_arg(trace_make_inline_c_string_ref(name), v);
}

static inline void typed_sample__event(fxt_buffer_t* b, trace_ticks_t ticks, const char* category,
                                       const char* name, const trace_arg_t* args, size_t n) {
  trace_thread_ref_t thread = trace_make_inline_thread_ref(10, 11);
  trace_string_ref_t cat = trace_make_inline_c_string_ref(category);
  trace_string_ref_t nm = trace_make_inline_c_string_ref(name);
  size_t words = fxt_event_record_words(0, &thread, &cat, &nm, args, n);
  uint64_t* p = fxt_buffer_reserve(b, words);
  if (p) fxt_write_event_record(p, words, 0, ticks, &thread, &cat, &nm, args, n, 0);
}

/* The archive: magic, provider, formats, events. 0, or -1 out of memory. */
static inline int typed_sample__build(fxt_buffer_t* b) {
  uint64_t* p = fxt_buffer_reserve(b, 1);
  if (!p) return -1;
  fxt_write_magic_record(p);
  static const char provider[] = "typed";
  size_t words = fxt_provider_info_words(sizeof(provider) - 1);
  p = fxt_buffer_reserve(b, words);
  if (!p) return -1;
  fxt_write_provider_info_record(p, 1, provider, sizeof(provider) - 1);
  trace_string_ref_t blob_name = trace_make_inline_c_string_ref("trace_event_format");
  for (size_t i = 0; i < sizeof(typed_sample__formats) / sizeof(typed_sample__formats[0]); i++) {
    size_t size = strlen(typed_sample__formats[i]);
    words = fxt_blob_record_words(&blob_name, size);
    p = fxt_buffer_reserve(b, words);
    if (!p) return -1;
    fxt_write_blob_record(p, words, 1, &blob_name, typed_sample__formats[i], size);
  }
  trace_arg_t send[] = {
      typed_sample__arg("fd", trace_make_int32_arg_value(3)),
      typed_sample__arg("len", trace_make_uint64_arg_value(100)),
      typed_sample__arg("peer",
                        trace_make_string_arg_value(trace_make_inline_c_string_ref("10.0.0.1"))),
  };
  typed_sample__event(b, 1000, "net", "net_send", send, 3);
  static const char comm[] = "swapper/0";
  trace_arg_t sched[] = {
      typed_sample__arg("prev_comm",
                        trace_make_string_arg_value(trace_make_inline_c_string_ref(comm))),
      typed_sample__arg("prev_state", trace_make_int64_arg_value(1)),
  };
  typed_sample__event(b, 2000, "kernel:sched", "sched_switch", sched, 2);
  static const char bytes[] = "\x01\x02\xff";
  static const char quad[8] = {1, 0, 0, 0, (char)0xfe, (char)0xff, (char)0xff, (char)0xff};
  trace_arg_t flags[] = {
      typed_sample__arg("flags", trace_make_uint32_arg_value(7)),
      typed_sample__arg("state", trace_make_int32_arg_value(1)),
      typed_sample__arg("quad", trace_make_string_arg_value(trace_make_inline_string_ref(quad, 8))),
      typed_sample__arg("buf", trace_make_string_arg_value(trace_make_inline_string_ref(bytes, 3))),
  };
  typed_sample__event(b, 3000, "net", "net_flags", flags, 4);
  return 0;
}

#endif /* FXTRACE_READER_TYPED_SAMPLE_H_ */
