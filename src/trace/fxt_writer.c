/* FXT through an archive writer, cut at record boundaries (fxt_writer.h). */
#include "trace/fxt_writer.h"

bool fxt_writer__write(archive_writer_t* w, archive_scan_t* scan, const uint8_t* data,
                       size_t size) {
  if (!w->codec) {
    uint64_t before = archive_writer__in_file(w);
    bool ok = archive_writer__write(w, data, size);
    archive_scan__feed(scan, data, (size_t)(archive_writer__in_file(w) - before));
    archive_writer__boundary(w, archive_scan__boundary(scan));
    return ok;
  }
  uint64_t at = scan->offset;
  archive_scan__feed(scan, data, size);
  uint64_t boundary = archive_scan__boundary(scan);
  size_t head = boundary > at && boundary - at <= size ? (size_t)(boundary - at) : 0;
  return archive_writer__write(w, data, head) && archive_writer__boundary(w, boundary) &&
         archive_writer__write(w, data + head, size - head);
}
