/* Not part of the public API: a trigger, ALERT:ACTION (docs/flight-recorder.md),
 * as `trace record --trigger` and file mode's FXTRACE_TRIGGER take it. */
#ifndef FXTRACE_ALERT_ALERT_TRIGGER_H_
#define FXTRACE_ALERT_ALERT_TRIGGER_H_

#include <stddef.h>

#include "alert/alert_limit.h"

typedef enum alert_action {
  ALERT_ACTION_NONE = 0,
  ALERT_ACTION_STOP = 1,     /* stop the trace and write the archive */
  ALERT_ACTION_SNAPSHOT = 2, /* write what the buffers hold now, keep tracing */
} alert_action_t;

typedef struct alert_trigger {
  char name[ALERT_NAME_MAX + 1];
  alert_action_t action;
} alert_trigger_t;

/* Parses "NAME:ACTION" (NAME 1 to 14 bytes, no ':' or ','; ACTION stop or
 * snapshot) of `length` bytes. NULL if good, else what is wrong. */
const char* alert_trigger__parse(const char* text, size_t length, alert_trigger_t* out);

/* The action of the first trigger named `name`, or ALERT_ACTION_NONE. */
alert_action_t alert_trigger__find(const alert_trigger_t* triggers, size_t count, const char* name);

const char* alert_trigger__action_name(alert_action_t action);

#endif /* FXTRACE_ALERT_ALERT_TRIGGER_H_ */
