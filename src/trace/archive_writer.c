/* A stream of records written plain or compressed, cut at a record
 * boundary after a failed write (see archive_writer.h). */
#include "trace/archive_writer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

bool archive_writer__init(archive_writer_t* w, output_t* out, compress_codec_t codec) {
  memset(w, 0, sizeof(*w));
  w->out = out;
  w->start = w->kept_file = w->frame_file_start = out->offset;
  if (codec != COMPRESS_NONE && !(w->codec = compress__new(out, codec))) {
    errno = ENOMEM;
    return false;
  }
  return true;
}

static bool fail(archive_writer_t* w, int error) {
  if (w->error == 0) w->error = error ? error : EIO;
  return false;
}

bool archive_writer__write(archive_writer_t* w, const void* data, size_t size) {
  if (w->error || w->cut) return false;
  if (w->codec) {
    int error = compress__write(w->codec, data, size);
    if (error) return fail(w, error);
    w->logical += size;
    return true;
  }
  size_t done = output__write(w->out, data, size);
  w->logical += done;
  return done == size || fail(w, w->out->error);
}

uint64_t archive_writer__in_file(const archive_writer_t* w) {
  return w->codec ? w->logical : w->out->offset - w->start;
}

/* Compressed: the frame ends here, and its end is the new cut point once
 * all of it is in the file. */
static bool end_frame(archive_writer_t* w) {
  int error = compress__end_frame(w->codec);
  if (error) return fail(w, error);
  w->frame_start = w->kept_logical = w->logical;
  w->frame_file_start = w->kept_file = w->out->offset;
  return true;
}

bool archive_writer__frame_due(const archive_writer_t* w, uint64_t pending) {
  return w->codec && w->logical + pending - w->frame_start >= ARCHIVE_FRAME_BYTES &&
         w->out->offset - w->frame_file_start >= ARCHIVE_FRAME_FILE_BYTES;
}

bool archive_writer__boundary(archive_writer_t* w, uint64_t logical) {
  if (w->cut) return false;
  if (!w->codec) {
    /* after a failed write too: the caller's last boundary within the file */
    if (logical <= archive_writer__in_file(w) && logical > w->kept_logical) {
      w->kept_logical = logical;
      w->kept_file = w->start + logical;
    }
    return w->error == 0;
  }
  if (w->error) return false;
  if (logical != w->logical || !archive_writer__frame_due(w, 0)) return true;
  return end_frame(w);
}

bool archive_writer__finish(archive_writer_t* w) {
  if (w->error || w->cut) return false;
  if (w->codec) return end_frame(w);
  w->kept_logical = w->logical;
  w->kept_file = w->out->offset;
  return true;
}

int archive_writer__cut(archive_writer_t* w) {
  w->cut = true;
  return output__cut(w->out, w->kept_file);
}

bool archive_writer__append(archive_writer_t* w, const void* data, size_t size) {
  if (!w->cut || w->out->offset != w->kept_file) return false;
  bool ok;
  if (w->codec) {
    /* the compressor's state belongs to the frame that was cut off */
    compressor_t* fresh = compress__new(w->out, compress__codec(w->codec));
    ok = fresh && compress__write(fresh, data, size) == 0 && compress__end_frame(fresh) == 0;
    compress__free(fresh);
  } else {
    ok = output__write(w->out, data, size) == size;
  }
  if (!ok) {
    output__cut(w->out, w->kept_file);
    return false;
  }
  w->kept_logical += size;
  w->kept_file = w->out->offset;
  return true;
}

void archive_writer__keep(archive_writer_t* w, const char* cmd, const char* unit,
                          const char* closing) {
  output_t* out = w->out;
  if (!out->regular) {
    fprintf(stderr, "trace %s: %s is not a regular file: what was written stays as it is\n", cmd,
            out->name);
    return;
  }
  int error = archive_writer__cut(w);
  if (error) {
    fprintf(stderr, "trace %s: cannot cut %s after its last complete %s: %s\n", cmd, out->name,
            unit, strerror(error));
    return;
  }
  if (w->kept_logical == 0) { /* not even the archive's first record */
    output__close(out);
    if (output__remove(out))
      fprintf(stderr, "trace %s: removed %s: not one complete %s fit in it\n", cmd, out->name,
              unit);
    return;
  }
  uint64_t cut_file = w->kept_file, cut_logical = w->kept_logical;
  bool closed = closing && archive_writer__append(w, closing, strlen(closing));
  char where[200];
  if (w->codec) /* the decompressed text's offset says where, for the reader */
    snprintf(where, sizeof(where),
             "cut at byte %llu, the end of its last complete %s %s (byte %llu of the %s)",
             (unsigned long long)cut_file, compress__codec_name(compress__codec(w->codec)),
             compress__codec(w->codec) == COMPRESS_GZIP ? "member" : "frame",
             (unsigned long long)cut_logical, closing ? "JSON text" : "archive");
  else
    snprintf(where, sizeof(where), "cut at byte %llu", (unsigned long long)cut_file);
  fprintf(stderr, "trace %s: kept %s: %s, after the last complete %s%s\n", cmd, out->name, where,
          unit,
          !closing ? ""
          : closed ? ", then closed"
                   : " (no room to close the JSON text)");
}

void archive_writer__free(archive_writer_t* w) {
  compress__free(w->codec);
  w->codec = NULL;
}
