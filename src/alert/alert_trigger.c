/* Triggers, ALERT:ACTION (alert_trigger.h). */
#include "alert/alert_trigger.h"

#include <string.h>

const char* alert_trigger__parse(const char* text, size_t length, alert_trigger_t* out) {
  const char* colon = memchr(text, ':', length);
  if (!colon) return "a trigger is ALERT:ACTION (the action is stop or snapshot)";
  size_t name_length = (size_t)(colon - text);
  if (name_length == 0) return "the alert name is empty";
  if (name_length > ALERT_NAME_MAX) return "an alert name is at most 14 characters";
  if (memchr(text, ',', name_length)) return "an alert name has no ','";
  const char* action = colon + 1;
  size_t action_length = length - name_length - 1;
  memset(out, 0, sizeof(*out));
  memcpy(out->name, text, name_length);
  if (action_length == 4 && memcmp(action, "stop", 4) == 0)
    out->action = ALERT_ACTION_STOP;
  else if (action_length == 8 && memcmp(action, "snapshot", 8) == 0)
    out->action = ALERT_ACTION_SNAPSHOT;
  else
    return "unknown action (stop or snapshot)";
  return NULL;
}

alert_action_t alert_trigger__find(const alert_trigger_t* triggers, size_t count,
                                   const char* name) {
  for (size_t i = 0; i < count; i++)
    if (strcmp(triggers[i].name, name) == 0) return triggers[i].action;
  return ALERT_ACTION_NONE;
}

const char* alert_trigger__action_name(alert_action_t action) {
  switch (action) {
    case ALERT_ACTION_STOP:
      return "stop";
    case ALERT_ACTION_SNAPSHOT:
      return "snapshot";
    default:
      return "none";
  }
}
