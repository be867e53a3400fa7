/* Not part of the public API: read by <trace/define_trace.h>; no include
 * guard (it runs once per event header and file). Each stage gives the
 * TRACE_EVENT family and the element macros one meaning and re-reads the
 * event header (TRACE_INTERNAL_TP_INCLUDE); every name it defines carries
 * the class or event name, so several event headers can be expanded in one
 * file. Stages marked R run when TRACE_INTERNAL_TP_STAGES_RECORD is defined
 * (in every file, after the header's first read there: all they define is
 * static), those marked C when TRACE_INTERNAL_TP_STAGES_CREATE is (in the
 * file that defines CREATE_TRACE_POINTS, whose R stages may have run at an
 * earlier include of the header).
 *
 *   1 R entry struct: the FXT argument area (tracepoint_types.h)
 *   2 C layout struct: the binary entry the format describes (offsets)
 *   3 R lengths of the variable-length fields, before reserving
 *   4 R field counts (fixed fields come first among the arguments)
 *   5 C the format: field table and print format
 *   6 R helpers: sizes, argument headers, widening, char-array compaction
 *   7 R the class's record functions (TP_fast_assign runs here)
 *   8 C per event: descriptor and registration */

/* ---- common to every stage ---- */
#undef TRACE_EVENT
#undef TRACE_EVENT_CONDITION
#undef DECLARE_EVENT_CLASS
#undef DEFINE_EVENT
#undef DEFINE_EVENT_CONDITION
#define TRACE_EVENT(name, proto, args, tstruct, assign, print)                               \
  DECLARE_EVENT_CLASS(name, TRACE_INTERNAL_TP_PARAMS(proto), TRACE_INTERNAL_TP_PARAMS(args), \
                      TRACE_INTERNAL_TP_PARAMS(tstruct), TRACE_INTERNAL_TP_PARAMS(assign),   \
                      TRACE_INTERNAL_TP_PARAMS(print))                                       \
  DEFINE_EVENT(name, name, TRACE_INTERNAL_TP_PARAMS(proto), TRACE_INTERNAL_TP_PARAMS(args))
#define TRACE_EVENT_CONDITION(name, proto, args, cond, tstruct, assign, print)       \
  TRACE_EVENT(name, TRACE_INTERNAL_TP_PARAMS(proto), TRACE_INTERNAL_TP_PARAMS(args), \
              TRACE_INTERNAL_TP_PARAMS(tstruct), TRACE_INTERNAL_TP_PARAMS(assign),   \
              TRACE_INTERNAL_TP_PARAMS(print))
#define DEFINE_EVENT_CONDITION(class_name, name, proto, args, cond) \
  DEFINE_EVENT(class_name, name, TRACE_INTERNAL_TP_PARAMS(proto), TRACE_INTERNAL_TP_PARAMS(args))
/* Only stage 8 has something per event. */
#define DEFINE_EVENT(class_name, name, proto, args)

#undef __field
#undef __field_struct
#undef __array
#undef __dynamic_array
#undef __string
#undef __entry
#undef __get_str
#undef __get_dynamic_array
#undef __get_dynamic_array_len
#undef __assign_str

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-local-typedefs" /* a class without fields */
/* This code compiles in every file that includes an event header, under the
 * user's warnings: an entry struct of a class whose fields are all variable
 * (__string, __dynamic_array) has no members (a GNU extension C and
 * extern "C" allow), and the argument area is addressed through char*. */
#pragma GCC diagnostic ignored "-Wpedantic"
#ifdef __clang__
#pragma clang diagnostic ignored "-Wgnu-empty-struct"
#pragma clang diagnostic ignored "-Wextern-c-compat"
#pragma clang diagnostic ignored "-Wcast-align"
#endif

#ifdef TRACE_INTERNAL_TP_STAGES_RECORD
/* ---- 1: the entry struct ---- */
#define __field(type, item)                                                                   \
  TRACE_INTERNAL_TP_SLOT uint32_t trace_internal_tp_h_##item[TRACE_INTERNAL_TP_HALVES(type)]; \
  type item;
#define __field_struct(type, item)                            \
  TRACE_INTERNAL_TP_SLOT uint64_t trace_internal_tp_h_##item; \
  type item;
#define __array(type, item, len)                              \
  TRACE_INTERNAL_TP_SLOT uint64_t trace_internal_tp_h_##item; \
  type item[len];
#define __dynamic_array(type, item, len)
#define __string(item, src)
#define DECLARE_EVENT_CLASS(class_name, proto, args, tstruct, assign, print) \
  struct trace_internal_tp_entry_##class_name {                              \
    tstruct                                                                  \
  };
#undef TRACE_INTERNAL_TP_REREAD_END
#include TRACE_INTERNAL_TP_INCLUDE

#endif /* TRACE_INTERNAL_TP_STAGES_RECORD */

#ifdef TRACE_INTERNAL_TP_STAGES_CREATE
/* ---- 2: the binary entry of the format (kernel layout, common fields first) ---- */
#undef __field
#undef __field_struct
#undef __array
#undef __dynamic_array
#undef __string
#undef DECLARE_EVENT_CLASS
#define __field(type, item) type item;
#define __field_struct(type, item) type item;
#define __array(type, item, len) type item[len];
#define __dynamic_array(type, item, len) uint32_t item;
#define __string(item, src) uint32_t item;
#define DECLARE_EVENT_CLASS(class_name, proto, args, tstruct, assign, print) \
  struct trace_internal_tp_layout_##class_name {                             \
    uint16_t common_type;                                                    \
    uint8_t common_flags;                                                    \
    uint8_t common_preempt_count;                                            \
    int32_t common_pid;                                                      \
    tstruct                                                                  \
  };
#undef TRACE_INTERNAL_TP_REREAD_END
#include TRACE_INTERNAL_TP_INCLUDE

#endif /* TRACE_INTERNAL_TP_STAGES_CREATE */

#ifdef TRACE_INTERNAL_TP_STAGES_RECORD
/* ---- 3: where the variable-length fields go ---- */
#undef __field
#undef __field_struct
#undef __array
#undef __dynamic_array
#undef __string
#undef DECLARE_EVENT_CLASS
#define __field(type, item)
#define __field_struct(type, item)
#define __array(type, item, len)
#define __dynamic_array(type, item, len) \
  uint32_t item##_off;                   \
  uint32_t item##_len;
#define __string(item, src) \
  uint32_t item##_off;      \
  uint32_t item##_len;
#define DECLARE_EVENT_CLASS(class_name, proto, args, tstruct, assign, print) \
  struct trace_internal_tp_dyn_##class_name {                                \
    tstruct uint32_t trace_internal_tp_too_big;                              \
  };
#undef TRACE_INTERNAL_TP_REREAD_END
#include TRACE_INTERNAL_TP_INCLUDE

/* ---- 4: counts ---- */
#undef __field
#undef __field_struct
#undef __array
#undef __dynamic_array
#undef __string
#undef DECLARE_EVENT_CLASS
#define __field(type, item) +1
#define __field_struct(type, item) +1
#define __array(type, item, len) +1
#define __dynamic_array(type, item, len) +0
#define __string(item, src) +0
#define DECLARE_EVENT_CLASS(class_name, proto, args, tstruct, assign, print) \
  enum { trace_internal_tp_nfixed_##class_name = 0 tstruct };
#undef TRACE_INTERNAL_TP_REREAD_END
#include TRACE_INTERNAL_TP_INCLUDE

#undef __field
#undef __field_struct
#undef __array
#undef __dynamic_array
#undef __string
#undef DECLARE_EVENT_CLASS
#define __field(type, item) +1
#define __field_struct(type, item) +1
#define __array(type, item, len) +1
#define __dynamic_array(type, item, len) +1
#define __string(item, src) +1
#define DECLARE_EVENT_CLASS(class_name, proto, args, tstruct, assign, print)              \
  enum { trace_internal_tp_nargs_##class_name = 0 tstruct };                              \
  TRACE_INTERNAL_TP_STATIC_ASSERT(trace_internal_tp_nargs_##class_name <= TRACE_MAX_ARGS, \
                                  "TRACE_EVENT " #class_name                              \
                                  ": at most 15 fields (an FXT record holds 15 arguments)");
#undef TRACE_INTERNAL_TP_REREAD_END
#include TRACE_INTERNAL_TP_INCLUDE

#endif /* TRACE_INTERNAL_TP_STAGES_RECORD */

#ifdef TRACE_INTERNAL_TP_STAGES_CREATE
/* ---- 5: the format ----
 * A function per class holds the table, so that offsetof can name the
 * class's layout through a block-scope typedef while tstruct expands. */
#undef __field
#undef __field_struct
#undef __array
#undef __dynamic_array
#undef __string
#undef DECLARE_EVENT_CLASS
#define TRACE_INTERNAL_TP_OFFSET(item) ((uint32_t)offsetof(trace_internal_tp_layout_t, item))
#define __field(type, item)        \
  {#type,                          \
   #item,                          \
   TRACE_TP_FIELD_SCALAR,          \
   (uint32_t)sizeof(type),         \
   0,                              \
   TRACE_INTERNAL_TP_OFFSET(item), \
   (uint32_t)TRACE_INTERNAL_TP_IS_SIGNED(type)},
#define __field_struct(type, item)                                                                 \
  {#type, #item, TRACE_TP_FIELD_STRUCT, (uint32_t)sizeof(type), 0, TRACE_INTERNAL_TP_OFFSET(item), \
   0},
#define __array(type, item, len)                                                       \
  {#type,                                                                              \
   #item,                                                                              \
   TRACE_INTERNAL_TP_IS_CHAR(type) ? TRACE_TP_FIELD_CHAR_ARRAY : TRACE_TP_FIELD_ARRAY, \
   (uint32_t)(sizeof(type) * (len)),                                                   \
   (uint32_t)(len),                                                                    \
   TRACE_INTERNAL_TP_OFFSET(item),                                                     \
   (uint32_t)(TRACE_INTERNAL_TP_IS_CHAR(type) ? 0 : TRACE_INTERNAL_TP_IS_SIGNED(type))},
#define __dynamic_array(type, item, len) \
  {#type,                                \
   #item,                                \
   TRACE_TP_FIELD_DYN_ARRAY,             \
   4,                                    \
   0,                                    \
   TRACE_INTERNAL_TP_OFFSET(item),       \
   (uint32_t)TRACE_INTERNAL_TP_IS_SIGNED(type)},
#define __string(item, src) \
  {"char", #item, TRACE_TP_FIELD_STRING, 4, 0, TRACE_INTERNAL_TP_OFFSET(item), 0},
/* The print format as tracefs shows it: fields as REC->name, the
 * framework's helpers as written. */
#define __entry REC
#define __get_str(field) __get_str(field)
#define __get_dynamic_array(field) __get_dynamic_array(field)
#define __get_dynamic_array_len(field) __get_dynamic_array_len(field)
#define DECLARE_EVENT_CLASS(class_name, proto, args, tstruct, assign, print)                   \
  static const trace_tp_class_t* trace_internal_tp_class_##class_name(void) {                  \
    typedef struct trace_internal_tp_layout_##class_name trace_internal_tp_layout_t;           \
    static const trace_tp_field_t fields[] = {tstruct{NULL, NULL, 0, 0, 0, 0, 0}};             \
    static const trace_tp_class_t event_class = {fields, trace_internal_tp_nargs_##class_name, \
                                                 TRACE_INTERNAL_TP_STR(print)};                \
    return &event_class;                                                                       \
  }
#undef TRACE_INTERNAL_TP_REREAD_END
#include TRACE_INTERNAL_TP_INCLUDE
#undef __entry
#undef __get_str
#undef __get_dynamic_array
#undef __get_dynamic_array_len

#endif /* TRACE_INTERNAL_TP_STAGES_CREATE */

#ifdef TRACE_INTERNAL_TP_STAGES_RECORD
/* ---- 6a: lengths of the variable-length fields, from the arguments ----
 * Offsets count from the start of the argument area; `bytes` is its size so
 * far (the entry struct, then each variable field's header and data). */
#undef __field
#undef __field_struct
#undef __array
#undef __dynamic_array
#undef __string
#undef DECLARE_EVENT_CLASS
#define __field(type, item)
#define __field_struct(type, item)
#define __array(type, item, len)
#define __dynamic_array(type, item, len)                                              \
  {                                                                                   \
    size_t trace_internal_tp_n = (size_t)(len) * sizeof(type);                        \
    if (trace_internal_tp_n > 0x7fff) {                                               \
      trace_internal_tp_d->trace_internal_tp_too_big = 1;                             \
      trace_internal_tp_n = 0;                                                        \
    }                                                                                 \
    trace_internal_tp_d->item##_off = (uint32_t)(*trace_internal_tp_bytes + 8);       \
    trace_internal_tp_d->item##_len = (uint32_t)trace_internal_tp_n;                  \
    *trace_internal_tp_bytes += 8 + trace_internal_tp_words(trace_internal_tp_n) * 8; \
  }
#define __string(item, src)                                                           \
  {                                                                                   \
    size_t trace_internal_tp_n = trace_internal_tp_str_len(src);                      \
    trace_internal_tp_d->item##_off = (uint32_t)(*trace_internal_tp_bytes + 8);       \
    trace_internal_tp_d->item##_len = (uint32_t)trace_internal_tp_n;                  \
    *trace_internal_tp_bytes += 8 + trace_internal_tp_words(trace_internal_tp_n) * 8; \
  }
#define DECLARE_EVENT_CLASS(class_name, proto, args, tstruct, assign, print) \
  static inline void trace_internal_tp_sizes_##class_name(                   \
      struct trace_internal_tp_dyn_##class_name* trace_internal_tp_d,        \
      size_t* trace_internal_tp_bytes, proto) {                              \
    trace_internal_tp_d->trace_internal_tp_too_big = 0;                      \
    tstruct                                                                  \
  }
#undef TRACE_INTERNAL_TP_REREAD_END
#include TRACE_INTERNAL_TP_INCLUDE

/* ---- 6b: argument headers (fixed fields first, then variable ones) ---- */
#undef __field
#undef __field_struct
#undef __array
#undef __dynamic_array
#undef __string
#undef DECLARE_EVENT_CLASS
#define __field(type, item)                                                            \
  trace_internal_tp_put_header(                                                        \
      trace_internal_tp_e->trace_internal_tp_h_##item, TRACE_INTERNAL_TP_HALVES(type), \
      trace_internal_tp_header(TRACE_INTERNAL_TP_SCALAR_TYPE(type),                    \
                               TRACE_INTERNAL_TP_HALVES(type),                         \
                               trace_internal_tp_nb[trace_internal_tp_fi], 0));        \
  trace_internal_tp_fi++;
#define __field_struct(type, item)                                                          \
  trace_internal_tp_e->trace_internal_tp_h_##item =                                         \
      trace_internal_tp_header(TRACE_ARG_STRING, 1 + trace_internal_tp_words(sizeof(type)), \
                               trace_internal_tp_nb[trace_internal_tp_fi], sizeof(type));   \
  trace_internal_tp_fi++;
/* A char array's header is set when it is compacted (6d). */
#define __array(type, item, len)                                                \
  if (!TRACE_INTERNAL_TP_IS_CHAR(type))                                         \
    trace_internal_tp_e->trace_internal_tp_h_##item = trace_internal_tp_header( \
        TRACE_ARG_STRING, 1 + trace_internal_tp_words(sizeof(type) * (len)),    \
        trace_internal_tp_nb[trace_internal_tp_fi], sizeof(type) * (len));      \
  trace_internal_tp_fi++;
#define TRACE_INTERNAL_TP_VAR_HEADER(item)                                                         \
  {                                                                                                \
    uint64_t* trace_internal_tp_h =                                                                \
        (uint64_t*)(trace_internal_tp_a + trace_internal_tp_d->item##_off) - 1;                    \
    size_t trace_internal_tp_n = trace_internal_tp_d->item##_len;                                  \
    size_t trace_internal_tp_w = trace_internal_tp_words(trace_internal_tp_n);                     \
    *trace_internal_tp_h =                                                                         \
        trace_internal_tp_header(TRACE_ARG_STRING, 1 + trace_internal_tp_w,                        \
                                 trace_internal_tp_nb[trace_internal_tp_vi], trace_internal_tp_n); \
    if (trace_internal_tp_w != 0) trace_internal_tp_h[trace_internal_tp_w] = 0;                    \
    trace_internal_tp_vi++;                                                                        \
  }
#define __dynamic_array(type, item, len) TRACE_INTERNAL_TP_VAR_HEADER(item)
#define __string(item, src) TRACE_INTERNAL_TP_VAR_HEADER(item)
#define DECLARE_EVENT_CLASS(class_name, proto, args, tstruct, assign, print)                       \
  static inline void trace_internal_tp_headers_##class_name(                                       \
      struct trace_internal_tp_entry_##class_name* trace_internal_tp_e, char* trace_internal_tp_a, \
      const struct trace_internal_tp_dyn_##class_name* trace_internal_tp_d,                        \
      const uint16_t* trace_internal_tp_nb) {                                                      \
    unsigned trace_internal_tp_fi = 0;                                                             \
    unsigned trace_internal_tp_vi = trace_internal_tp_nfixed_##class_name;                         \
    (void)trace_internal_tp_fi;                                                                    \
    (void)trace_internal_tp_vi;                                                                    \
    tstruct                                                                                        \
  }
#undef TRACE_INTERNAL_TP_REREAD_END
#include TRACE_INTERNAL_TP_INCLUDE
#undef TRACE_INTERNAL_TP_VAR_HEADER

/* ---- 6c: widening small and float values after TP_fast_assign ---- */
#undef __field
#undef __field_struct
#undef __array
#undef __dynamic_array
#undef __string
#undef DECLARE_EVENT_CLASS
#define __field(type, item)                                         \
  trace_internal_tp_widen(&trace_internal_tp_e->item, sizeof(type), \
                          TRACE_INTERNAL_TP_IS_SIGNED(type), TRACE_INTERNAL_TP_IS_REAL(type));
#define __field_struct(type, item)
#define __array(type, item, len)
#define __dynamic_array(type, item, len)
#define __string(item, src)
#define DECLARE_EVENT_CLASS(class_name, proto, args, tstruct, assign, print) \
  static inline void trace_internal_tp_widen_##class_name(                   \
      struct trace_internal_tp_entry_##class_name* trace_internal_tp_e) {    \
    (void)trace_internal_tp_e;                                               \
    tstruct                                                                  \
  }
#undef TRACE_INTERNAL_TP_REREAD_END
#include TRACE_INTERNAL_TP_INCLUDE

/* ---- 6d: char arrays keep the bytes before their first NUL ----
 * Each compaction moves what follows down; `freed` is how far. */
#undef __field
#undef __field_struct
#undef __array
#undef __dynamic_array
#undef __string
#undef DECLARE_EVENT_CLASS
#define __field(type, item) trace_internal_tp_fi++;
#define __field_struct(type, item) trace_internal_tp_fi++;
#define __array(type, item, len)                                              \
  if (TRACE_INTERNAL_TP_IS_CHAR(type))                                        \
    trace_internal_tp_freed += trace_internal_tp_compact_chars(               \
        (uint64_t*)((char*)&trace_internal_tp_e->trace_internal_tp_h_##item - \
                    trace_internal_tp_freed),                                 \
        (len), trace_internal_tp_nb[trace_internal_tp_fi],                    \
        trace_internal_tp_end - trace_internal_tp_freed);                     \
  trace_internal_tp_fi++;
#define __dynamic_array(type, item, len)
#define __string(item, src)
#define DECLARE_EVENT_CLASS(class_name, proto, args, tstruct, assign, print) \
  static inline size_t trace_internal_tp_compact_##class_name(               \
      struct trace_internal_tp_entry_##class_name* trace_internal_tp_e,      \
      char* trace_internal_tp_end, const uint16_t* trace_internal_tp_nb) {   \
    unsigned trace_internal_tp_fi = 0;                                       \
    size_t trace_internal_tp_freed = 0;                                      \
    (void)trace_internal_tp_e;                                               \
    (void)trace_internal_tp_end;                                             \
    (void)trace_internal_tp_nb;                                              \
    tstruct(void) trace_internal_tp_fi;                                      \
    return trace_internal_tp_freed;                                          \
  }
#undef TRACE_INTERNAL_TP_REREAD_END
#include TRACE_INTERNAL_TP_INCLUDE

/* ---- 7: the class's record function ----
 * Sizes the record, reserves it, writes the argument headers, runs
 * TP_fast_assign on __entry (the reserved record itself), widens, compacts
 * and commits. */
#undef __field
#undef __field_struct
#undef __array
#undef __dynamic_array
#undef __string
#undef DECLARE_EVENT_CLASS
#define __field(type, item)
#define __field_struct(type, item)
#define __array(type, item, len)
#define __dynamic_array(type, item, len)
#define __string(item, src)
#define __entry trace_internal_tp_entry
#define __get_str(field) ((char*)trace_internal_tp_args + trace_internal_tp_dyn.field##_off)
#define __get_dynamic_array(field) \
  ((void*)((char*)trace_internal_tp_args + trace_internal_tp_dyn.field##_off))
#define __get_dynamic_array_len(field) (trace_internal_tp_dyn.field##_len)
#define __assign_str(field, src)                                               \
  trace_internal_tp_copy_str(__get_str(field), trace_internal_tp_str_src(src), \
                             trace_internal_tp_dyn.field##_len)
/* One record function: `begin` reserves (NULL: nothing held), `on_miss`
 * runs when it did not, `again` says whether to record once more: the
 * out-of-line function writes the event into each session that enables its
 * system, one after the other (TP_fast_assign runs once per session, as
 * Linux runs it once per trace instance); the inline one writes once. */
#define TRACE_INTERNAL_TP_RECORD_FN(class_name, fn, proto, args, assign, begin, on_miss, again)    \
  fn(trace_tracepoint_t* trace_internal_tp, proto) {                                               \
    struct trace_internal_tp_dyn_##class_name trace_internal_tp_dyn;                               \
    size_t trace_internal_tp_bytes = trace_internal_tp_nfixed_##class_name != 0                    \
                                         ? sizeof(struct trace_internal_tp_entry_##class_name)     \
                                         : 0;                                                      \
    trace_internal_tp_sizes_##class_name(&trace_internal_tp_dyn, &trace_internal_tp_bytes, args);  \
    if (trace_internal_tp_dyn.trace_internal_tp_too_big) trace_internal_tp_bytes = 0x10000;        \
    trace_tp_record_t trace_internal_tp_record;                                                    \
    trace_internal_tp_record.sessions = 0;                                                         \
    do {                                                                                           \
      uint64_t* trace_internal_tp_args =                                                           \
          begin(trace_internal_tp, trace_internal_tp_bytes / 8,                                    \
                trace_internal_tp_nargs_##class_name, &trace_internal_tp_record);                  \
      if (trace_internal_tp_args == NULL) {                                                        \
        on_miss;                                                                                   \
        return;                                                                                    \
      }                                                                                            \
      struct trace_internal_tp_entry_##class_name* trace_internal_tp_entry =                       \
          (struct trace_internal_tp_entry_##class_name*)(void*)trace_internal_tp_args;             \
      trace_internal_tp_headers_##class_name(trace_internal_tp_entry,                              \
                                             (char*)trace_internal_tp_args,                        \
                                             &trace_internal_tp_dyn,                               \
                                             trace_internal_tp_record.names);                      \
      {assign} trace_internal_tp_widen_##class_name(trace_internal_tp_entry);                      \
      size_t trace_internal_tp_freed = trace_internal_tp_compact_##class_name(                     \
          trace_internal_tp_entry, (char*)trace_internal_tp_args + trace_internal_tp_bytes,        \
          trace_internal_tp_record.names);                                                         \
      trace_internal_tp_end(&trace_internal_tp_record,                                             \
                            (trace_internal_tp_bytes - trace_internal_tp_freed) / 8);              \
    } while (again);                                                                               \
  }
/* Two per class: the common case calls nothing but strlen (for __string)
 * and goes to the other, out of line, for anything else (a tail call), so
 * it keeps its values in the caller-saved registers and needs no frame. */
#define DECLARE_EVENT_CLASS(class_name, proto, args, tstruct, assign, print)                       \
  TRACE_INTERNAL_TP_RECORD_FN(                                                                     \
      class_name, __attribute__((noinline, cold)) static void trace_internal_tp_slow_##class_name, \
      TRACE_INTERNAL_TP_PARAMS(proto), TRACE_INTERNAL_TP_PARAMS(args), assign,                     \
      trace_internal_tp_begin_slow, (void)0, trace_internal_tp_record.sessions != 0)                                                       \
  TRACE_INTERNAL_TP_RECORD_FN(class_name, static inline void trace_internal_tp_do_##class_name,    \
                              TRACE_INTERNAL_TP_PARAMS(proto), TRACE_INTERNAL_TP_PARAMS(args),     \
                              assign, trace_internal_tp_begin_fast,                                \
                              trace_internal_tp_slow_##class_name(trace_internal_tp, args), 0)
#undef TRACE_INTERNAL_TP_REREAD_END
#include TRACE_INTERNAL_TP_INCLUDE
#undef __entry
#undef __get_str
#undef __get_dynamic_array
#undef __get_dynamic_array_len
#undef __assign_str

#endif /* TRACE_INTERNAL_TP_STAGES_RECORD */

#ifdef TRACE_INTERNAL_TP_STAGES_CREATE
/* ---- 8: per event ---- */
#undef __field
#undef __field_struct
#undef __array
#undef __dynamic_array
#undef __string
#undef DECLARE_EVENT_CLASS
#undef DEFINE_EVENT
#define __field(type, item)
#define __field_struct(type, item)
#define __array(type, item, len)
#define __dynamic_array(type, item, len)
#define __string(item, src)
#define DECLARE_EVENT_CLASS(class_name, proto, args, tstruct, assign, print)
#define DEFINE_EVENT(class_name, name, proto, args)                                   \
  trace_tracepoint_t trace_internal_tp_##name = {                                     \
      {0, NULL}, TRACE_INTERNAL_TP_STR(TRACE_SYSTEM), #name, NULL, {0}, 0, 0, NULL};  \
  __attribute__((constructor)) static void trace_internal_tp_register_##name(void) {  \
    trace_internal_tp_##name.event_class = trace_internal_tp_class_##class_name();    \
    trace_engine__tp_register(&trace_internal_tp_##name);                             \
  }                                                                                   \
  __attribute__((destructor)) static void trace_internal_tp_unregister_##name(void) { \
    trace_engine__tp_unregister(&trace_internal_tp_##name);                           \
  }
#undef TRACE_INTERNAL_TP_REREAD_END
#include TRACE_INTERNAL_TP_INCLUDE

#endif /* TRACE_INTERNAL_TP_STAGES_CREATE */

#pragma GCC diagnostic pop

/* ---- back to the declaring stage for the next event header ---- */
#undef TRACE_EVENT
#undef TRACE_EVENT_CONDITION
#undef DECLARE_EVENT_CLASS
#undef DEFINE_EVENT
#undef DEFINE_EVENT_CONDITION
#undef __field
#undef __field_struct
#undef __array
#undef __dynamic_array
#undef __string
