/* Not part of the public API: where `trace record --trigger=ALERT:snapshot`
 * takes its snapshot. A hook until the snapshot branch is merged; it has
 * src/trace/record_snapshot.h with record_snapshot__take(&s->snapshots,
 * reason) (the session's record_snapshot_t) and
 * record_snapshot__unsupported(mode, output, json). At the merge: in
 * cmd_record.c, take_alerts() calls record_snapshot__take(&s->snapshots,
 * reason) instead of record__take_snapshot(reason), snapshot_unsupported()
 * may give way to record_snapshot__unsupported(), and this file and
 * record_snapshot_hook.c go. */
#ifndef FXTRACE_TRACE_RECORD_SNAPSHOT_HOOK_H_
#define FXTRACE_TRACE_RECORD_SNAPSHOT_HOOK_H_

/* Takes a snapshot now, saying why (`reason`: "alert 'NAME'"); the trace
 * goes on. 0, or -1 after saying on stderr why not. */
int record__take_snapshot(const char* reason);

#endif /* FXTRACE_TRACE_RECORD_SNAPSHOT_HOOK_H_ */
