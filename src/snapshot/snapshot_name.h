/* Not part of the public API: where snapshots go (docs/snapshots.md). The
 * Nth snapshot of a trace written to PATH is PATH with ".N" inserted before
 * its archive extension: out.fxt → out.1.fxt, out.fxt.zst → out.1.fxt.zst,
 * out.fxt.gz → out.1.fxt.gz, out.zst → out.1.zst; a name without any of
 * these gets ".N" appended (trace → trace.1). Only the last path component
 * is looked at, so a dot in a directory name never matters. */
#ifndef FXTRACE_SNAPSHOT_SNAPSHOT_NAME_H_
#define FXTRACE_SNAPSHOT_SNAPSHOT_NAME_H_

#include <stdbool.h>
#include <stddef.h>

/* Writes the Nth snapshot's name into out; false if it does not fit. */
bool snapshot_name__format(const char* path, unsigned n, char* out, size_t size);

#endif /* FXTRACE_SNAPSHOT_SNAPSHOT_NAME_H_ */
