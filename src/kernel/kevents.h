/* Not part of the public API: the kernel events a trace enables, resolved
 * against the kernel's own format descriptions (libtraceevent), and the
 * bounds-checked field access the page converter and the FXT writer use.
 * Nothing here trusts the bytes of an event: every field read is checked
 * against the event's size. */
#ifndef FXTRACE_KERNEL_KEVENTS_H_
#define FXTRACE_KERNEL_KEVENTS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace-engine/types.h"

struct tep_handle;
struct tep_event;
struct tep_format_field;

typedef enum {
  KEV_GENERIC = 0,   /* kernel:SYSTEM/EVENT: an instant with the fields as args */
  KEV_SWITCH,        /* sched_switch */
  KEV_WAKEUP,        /* sched_waking, sched_wakeup_new */
  KEV_FORK,          /* sched_process_fork */
  KEV_EXEC,          /* sched_process_exec */
  KEV_EXIT,          /* sched_process_exit */
  KEV_RENAME,        /* task_rename */
  KEV_IRQ_ENTRY,     /* irq_handler_entry */
  KEV_IRQ_EXIT,      /* irq_handler_exit */
  KEV_SOFTIRQ_ENTRY, /* softirq_entry */
  KEV_SOFTIRQ_EXIT,  /* softirq_exit */
  KEV_NEWTASK,       /* task_newtask: a task's process at its birth (kbirths.h) */
} kev_kind_t;

#define KEV_MAX_FIELDS 15 /* FXT's argument count */

typedef struct kev_desc {
  int id;
  kev_kind_t kind;
  struct tep_event* event;
  char category[80];        /* the FXT category of its instant events (its kind's) */
  char system_category[80]; /* kernel:SYSTEM: the category of its generic form */
  /* the fields used by the known kinds (NULL when the format lacks one) */
  struct tep_format_field* f[8];
  /* generic: the non-common fields, in format order (at most 15) */
  struct tep_format_field* fields[KEV_MAX_FIELDS];
  unsigned field_count;
  bool truncated; /* more than 15 fields */
  /* the string refs of its records are the writer's, per session (kwrite.h):
   * the table is shared by every session the kernel provider serves */
} kev_desc_t;

typedef struct kev_table {
  struct tep_handle* tep;
  kev_desc_t* descs;
  size_t count;
  int max_id;
  kev_desc_t** by_id;         /* max_id + 1 entries */
  int type_offset, type_size; /* common_type */
  int pid_offset, pid_size;   /* common_pid */
} kev_table_t;

/* The known field slots (kev_desc_t.f) per kind. */
enum {
  KF_SWITCH_PREV_COMM = 0,
  KF_SWITCH_PREV_PID,
  KF_SWITCH_PREV_PRIO,
  KF_SWITCH_PREV_STATE,
  KF_SWITCH_NEXT_COMM,
  KF_SWITCH_NEXT_PID,
  KF_SWITCH_NEXT_PRIO,
};
enum { KF_WAKE_COMM = 0, KF_WAKE_PID, KF_WAKE_PRIO, KF_WAKE_CPU };
enum { KF_FORK_PARENT_PID = 0, KF_FORK_CHILD_COMM, KF_FORK_CHILD_PID };
enum { KF_EXEC_FILENAME = 0, KF_EXEC_PID };
enum { KF_EXIT_COMM = 0, KF_EXIT_PID };
enum { KF_RENAME_PID = 0, KF_RENAME_NEWCOMM };
enum { KF_IRQ_IRQ = 0, KF_IRQ_NAME };
enum { KF_SOFTIRQ_VEC = 0 };
enum { KF_NEWTASK_PID = 0, KF_NEWTASK_CLONE_FLAGS };

void kev_table__init(kev_table_t* t, struct tep_handle* tep);
void kev_table__free(kev_table_t* t); /* frees the tep too */

/* Adds system/event with a kind (the category of its instants is
 * `kernel:SYSTEM`, or `category` when not NULL). Returns the descriptor, or
 * NULL when the tep does not know the event. An event already in the table
 * keeps its place (descriptors are only ever appended, so their indexes
 * stay valid while the table grows); one added as KEV_GENERIC and asked
 * for again with a known kind takes that kind and category. The table
 * needs kev_table__finish() again after adds. */
kev_desc_t* kev_table__add(kev_table_t* t, const char* system, const char* event, kev_kind_t kind,
                           const char* category);

/* Finishes the table after the adds (the id index, common fields). 0 or -1. */
int kev_table__finish(kev_table_t* t);

/* The descriptor of the event at data (size bytes), NULL if unknown or too short. */
const kev_desc_t* kev_table__lookup(const kev_table_t* t, const void* data, size_t size);

/* common_pid of the event, -1 when it does not fit. */
int64_t kev__common_pid(const kev_table_t* t, const void* data, size_t size);

/* Integer field, sign-extended when signed. false when absent or out of bounds. */
bool kev__int(const struct tep_format_field* f, const void* data, size_t size, int64_t* out);

/* Char array (up to the first NUL) or dynamic (data_loc) string/array. The bytes stay
 * in data. false when absent or out of bounds. */
bool kev__bytes(const struct tep_format_field* f, const void* data, size_t size, const char** out,
                size_t* length);

/* Generic decoding (docs/event-formats.md): one arg per field of d, named
 * by field_refs (one per field, in d's field order); returns the count. */
size_t kev__args(const kev_desc_t* d, const trace_string_ref_t* field_refs, const void* data,
                 size_t size, trace_arg_t* args);

#endif /* FXTRACE_KERNEL_KEVENTS_H_ */
