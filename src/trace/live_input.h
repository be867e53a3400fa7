/* Reading a file-mode trace that has not finished (docs/file-mode.md): its
 * FXTRACE_OUTPUT holds a placeholder naming the live buffer in shared
 * memory (engine/live_placeholder.h). */
#ifndef FXTRACE_TRACE_LIVE_INPUT_H_
#define FXTRACE_TRACE_LIVE_INPUT_H_

/* `fd` is `path` opened for reading. If it starts with a live-buffer
 * placeholder, returns a new descriptor (an anonymous memory file, at
 * offset 0) holding the raw buffer image the readers recover: the live
 * buffer followed by the streamed saves the placeholder file holds; `fd` is
 * closed. Otherwise returns `fd` as it was. -1 (after a message naming
 * `cmd`, `fd` closed) when the live buffer cannot be read. */
int live_input__follow(const char* cmd, const char* path, int fd);

#endif /* FXTRACE_TRACE_LIVE_INPUT_H_ */
