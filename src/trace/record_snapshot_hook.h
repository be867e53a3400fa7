/* Not part of the public API: where `trace record --trigger=ALERT:snapshot`
 * takes its snapshot. A hook until the snapshot branch (src/trace/
 * record_snapshot.h, record_snapshot__take()) is merged: the lead then makes
 * record__take_snapshot() call it, or replaces the call in cmd_record.c. */
#ifndef FXTRACE_TRACE_RECORD_SNAPSHOT_HOOK_H_
#define FXTRACE_TRACE_RECORD_SNAPSHOT_HOOK_H_

/* Takes a snapshot now, saying why (`reason`: "alert 'NAME'"); the trace
 * goes on. 0, or -1 after saying on stderr why not. */
int record__take_snapshot(const char* reason);

#endif /* FXTRACE_TRACE_RECORD_SNAPSHOT_HOOK_H_ */
