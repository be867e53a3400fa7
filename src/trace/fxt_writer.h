/* Not part of the public API: an FXT archive written through an archive
 * writer (archive_writer.h) with its record boundaries found by the framing
 * scan (archive_scan.h), so that a failed write cuts the file after a whole
 * record: `trace record` and `trace recover` write their archives so. */
#ifndef FXTRACE_TRACE_FXT_WRITER_H_
#define FXTRACE_TRACE_FXT_WRITER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/archive_scan.h"
#include "trace/archive_writer.h"

/* Writes the next `size` bytes of the archive, which `scan` (fed nothing
 * else, from the archive's start) scans. Plain: the bytes that reached the
 * file are scanned, and the last record boundary among them is the cut
 * point. Compressed: the bytes are scanned first, and a frame may end at
 * their last record boundary. false once a write failed (w->error); the
 * scan is then behind. */
bool fxt_writer__write(archive_writer_t* w, archive_scan_t* scan, const uint8_t* data, size_t size);

#endif /* FXTRACE_TRACE_FXT_WRITER_H_ */
