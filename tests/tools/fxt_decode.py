#!/usr/bin/env python3
"""Strict, standalone decoder and conformance checker for the Fuchsia Trace Format (FXT).

Written from the format digest (shared/spec/FXT.md) only, independently of the C reader in
src/, so that it can serve as a second implementation that checks fxtrace archives.

Library use:
    import fxt_decode
    trace = fxt_decode.decode(data)        # bytes -> Trace
    trace.records                          # list of dicts, in archive order
    trace.errors                           # conformance violations (list of str, with offsets)
    trace.warnings                         # things that are legal but unusual

CLI use:
    python3 fxt_decode.py FILE [--records] [--selftest]
prints a verdict and exits 0 only when the archive conforms (no violation at all).

Every record dict has at least:
    'offset'   byte offset of the record in the archive
    'words'    size in words (header included)
    'rtype'    record type (0..15)
    'kind'     one of: magic, provider_info, provider_section, provider_event, trace_info,
               metadata, init, string, thread, event, blob, userspace_object, kernel_object,
               scheduling, log, large_blob, large, unknown
    'provider' id of the provider section the record belongs to (0 before any metadata)
    'ok'       False when the record cannot be used (bad reference, too small, unknown type):
               readers report and skip such a record
    'conforms' False when the record violates any rule (reserved bits, padding, sizes, ...)
Strings are kept as raw bytes (names, categories, messages, string args); use
decode_utf8_replace() to turn them into text the way `trace convert` must.
"""

import struct
import sys

MAGIC_WORD = 0x0016547846040010
MAGIC_VALUE = 0x16547846
MAX_INLINE_STRING = 32000          # TRACE_ENCODED_STRING_REF_MAX_LENGTH
MAX_LARGE_RECORD_BYTES = 1 << 18   # TRACE_ENCODED_INLINE_LARGE_RECORD_MAX_SIZE

# Record types (FXT.md §7)
RT_METADATA, RT_INIT, RT_STRING, RT_THREAD, RT_EVENT, RT_BLOB, RT_USEROBJ, RT_KOBJ, \
    RT_SCHED, RT_LOG = range(10)
RT_LARGE = 15

RECORD_TYPE_NAMES = {
    0: 'metadata', 1: 'initialization', 2: 'string', 3: 'thread', 4: 'event', 5: 'blob',
    6: 'userspace_object', 7: 'kernel_object', 8: 'scheduling', 9: 'log', 15: 'large',
}

# Event types (FXT.md §8.5)
EV_INSTANT, EV_COUNTER, EV_DUR_BEGIN, EV_DUR_END, EV_DUR_COMPLETE, EV_ASYNC_BEGIN, \
    EV_ASYNC_INSTANT, EV_ASYNC_END, EV_FLOW_BEGIN, EV_FLOW_STEP, EV_FLOW_END = range(11)
EVENT_TYPE_NAMES = ['instant', 'counter', 'duration_begin', 'duration_end', 'duration_complete',
                    'async_begin', 'async_instant', 'async_end', 'flow_begin', 'flow_step',
                    'flow_end']
# Payload word after the arguments, by event type: name of the field, or None.
EVENT_PAYLOAD = [None, 'counter_id', None, None, 'end_ts', 'id', 'id', 'id', 'id', 'id', 'id']

# Argument types (FXT.md §10)
ARG_NULL, ARG_INT32, ARG_UINT32, ARG_INT64, ARG_UINT64, ARG_DOUBLE, ARG_STRING, ARG_POINTER, \
    ARG_KOID, ARG_BOOL, ARG_BLOB = range(11)
ARG_TYPE_NAMES = ['null', 'int32', 'uint32', 'int64', 'uint64', 'double', 'string', 'pointer',
                  'koid', 'bool', 'blob']

ZX_OBJ_TYPE_PROCESS = 1
ZX_OBJ_TYPE_THREAD = 2


def bits(word, lo, hi):
    """Field [lo .. hi] (both included) of a 64-bit word."""
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


def pad_words(nbytes):
    return (nbytes + 7) // 8


def decode_utf8_replace(raw):
    """UTF-8 -> str, one U+FFFD per byte that is not part of a well-formed sequence.

    Well-formed sequences follow Unicode Table 3-7 (no overlongs, no surrogates, nothing above
    U+10FFFF). Unlike bytes.decode('utf-8', 'replace'), which substitutes maximal subparts, a
    bad sequence costs one U+FFFD for each of its bytes (docs/convert-json.md).
    """
    out = []
    i = 0
    n = len(raw)
    while i < n:
        b = raw[i]
        if b < 0x80:
            out.append(chr(b))
            i += 1
            continue
        if 0xC2 <= b <= 0xDF:
            need, lo2, hi2 = 1, 0x80, 0xBF
        elif b == 0xE0:
            need, lo2, hi2 = 2, 0xA0, 0xBF
        elif 0xE1 <= b <= 0xEC or 0xEE <= b <= 0xEF:
            need, lo2, hi2 = 2, 0x80, 0xBF
        elif b == 0xED:
            need, lo2, hi2 = 2, 0x80, 0x9F
        elif b == 0xF0:
            need, lo2, hi2 = 3, 0x90, 0xBF
        elif 0xF1 <= b <= 0xF3:
            need, lo2, hi2 = 3, 0x80, 0xBF
        elif b == 0xF4:
            need, lo2, hi2 = 3, 0x80, 0x8F
        else:
            out.append('\ufffd')
            i += 1
            continue
        ok = i + need <= n - 1
        if ok:
            if not (lo2 <= raw[i + 1] <= hi2):
                ok = False
            else:
                for k in range(2, need + 1):
                    if not (0x80 <= raw[i + k] <= 0xBF):
                        ok = False
                        break
        if ok:
            out.append(raw[i:i + need + 1].decode('utf-8'))
            i += need + 1
        else:
            out.append('\ufffd')
            i += 1
    return ''.join(out)


class Truncated(Exception):
    pass


class RecordError(Exception):
    """The current record violates the format; it is skipped after being reported."""


class Provider:
    def __init__(self, pid, name=b''):
        self.id = pid
        self.name = name
        self.strings = {}
        self.threads = {}
        self.ticks_per_second = None   # None: no initialization record -> 1 tick = 1 ns
        self.user_objects = {}


class Trace:
    def __init__(self):
        self.records = []
        self.errors = []
        self.warnings = []
        self.truncated_at = None       # offset of the record that runs past the end
        self.providers = {}

    @property
    def ok(self):
        return not self.errors

    def count_by_kind(self):
        out = {}
        for r in self.records:
            out[r['kind']] = out.get(r['kind'], 0) + 1
        return out


class _Cursor:
    """Reads the words of one record; all reads are bounded by the record size."""

    def __init__(self, data, offset, nwords, dec):
        self.data = data
        self.base = offset
        self.end = offset + nwords * 8
        self.pos = offset + 8      # past the header
        self.dec = dec

    def remaining_words(self):
        return (self.end - self.pos) // 8

    def word(self, what):
        if self.pos + 8 > self.end:
            raise RecordError('record too small: no room for %s' % what)
        (w,) = struct.unpack_from('<Q', self.data, self.pos)
        self.pos += 8
        return w

    def stream(self, nbytes, what):
        padded = pad_words(nbytes) * 8
        if self.pos + padded > self.end:
            raise RecordError('record too small: %s (%d bytes) runs past the record end'
                              % (what, nbytes))
        raw = bytes(self.data[self.pos:self.pos + nbytes])
        pad = self.data[self.pos + nbytes:self.pos + padded]
        if any(pad):
            self.dec.violation(self.pos + nbytes, 'non-zero padding after %s' % what)
        self.pos += padded
        return raw


class Decoder:
    def __init__(self, data, strict_limits=True):
        self.data = memoryview(data)
        self.trace = Trace()
        self.strict_limits = strict_limits
        self.cur = Provider(0)            # dummy provider before any metadata record
        self.trace.providers[0] = self.cur
        self.rec_off = 0

    # -- reporting ---------------------------------------------------------------------------
    def violation(self, offset, msg):
        self.trace.errors.append('offset %d (record at %d): %s' % (offset, self.rec_off, msg))

    def warn(self, msg):
        self.trace.warnings.append('record at %d: %s' % (self.rec_off, msg))

    def reserved(self, word, lo, hi, what):
        v = bits(word, lo, hi)
        if v:
            self.violation(self.rec_off, 'reserved bits [%d..%d] of %s are not 0 (0x%x)'
                           % (lo, hi, what, v))

    # -- references --------------------------------------------------------------------------
    def string_ref(self, cur, ref, what):
        """Resolve a 16-bit string ref; inline streams are read from the cursor."""
        if ref == 0:
            return b''
        if ref & 0x8000:
            n = ref & 0x7FFF
            if n == 0:
                self.warn('%s: inline string ref of length 0 (writers emit ref 0)' % what)
            if n > MAX_INLINE_STRING and self.strict_limits:
                self.violation(cur.pos, '%s: inline string of %d bytes exceeds %d'
                               % (what, n, MAX_INLINE_STRING))
            return cur.stream(n, what)
        if ref not in self.cur.strings:
            raise RecordError('%s: string index %d is not in provider %d\'s string table'
                              % (what, ref, self.cur.id))
        return self.cur.strings[ref]

    def thread_ref(self, cur, ref, what):
        if ref == 0:
            pid = cur.word(what + ' process koid')
            tid = cur.word(what + ' thread koid')
            return pid, tid
        if ref not in self.cur.threads:
            raise RecordError('%s: thread index %d is not in provider %d\'s thread table'
                              % (what, ref, self.cur.id))
        return self.cur.threads[ref]

    def ticks_to_ns(self, ticks, provider=None):
        p = provider or self.cur
        tps = p.ticks_per_second
        if tps is None:
            return ticks
        return ticks * 1000000000 // tps

    # -- arguments ---------------------------------------------------------------------------
    def arguments(self, cur, count):
        args = []
        for i in range(count):
            aoff = cur.pos
            h = cur.word('argument %d header' % i)
            atype = bits(h, 0, 3)
            asize = bits(h, 4, 15)
            if asize == 0:
                raise RecordError('argument %d has size 0' % i)
            if aoff + asize * 8 > cur.end:
                raise RecordError('argument %d (size %d words) runs past the record end'
                                  % (i, asize))
            aend = aoff + asize * 8
            # Arguments are read through a sub-cursor bounded by the argument size.
            sub = _Cursor(self.data, aoff, asize, self)
            name = self.string_ref(sub, bits(h, 16, 31), 'argument %d name' % i)
            arg = {'name': name, 'type': atype, 'offset': aoff, 'words': asize}
            if atype == ARG_NULL:
                self.reserved(h, 32, 63, 'null argument header')
                arg['value'] = None
            elif atype == ARG_INT32:
                v = bits(h, 32, 63)
                arg['value'] = v - (1 << 32) if v & 0x80000000 else v
            elif atype == ARG_UINT32:
                arg['value'] = bits(h, 32, 63)
            elif atype in (ARG_INT64, ARG_UINT64, ARG_DOUBLE, ARG_POINTER, ARG_KOID):
                self.reserved(h, 32, 63, '%s argument header' % ARG_TYPE_NAMES[atype])
                v = sub.word('argument %d value' % i)
                if atype == ARG_INT64:
                    v = v - (1 << 64) if v & (1 << 63) else v
                elif atype == ARG_DOUBLE:
                    (v,) = struct.unpack('<d', struct.pack('<Q', v))
                arg['value'] = v
            elif atype == ARG_STRING:
                self.reserved(h, 48, 63, 'string argument header')
                arg['value'] = self.string_ref(sub, bits(h, 32, 47), 'argument %d value' % i)
            elif atype == ARG_BOOL:
                self.reserved(h, 33, 63, 'bool argument header')
                arg['value'] = bool(bits(h, 32, 32))
            elif atype == ARG_BLOB:
                n = bits(h, 32, 63)
                arg['value'] = sub.stream(n, 'argument %d blob payload' % i)
            else:
                self.violation(aoff, 'unknown argument type %d (skipped by size)' % atype)
                arg['unknown'] = True
                sub.pos = aend
            if sub.pos != aend:
                self.violation(aoff, 'argument %d (%s) has size %d words but its content '
                               'takes %d' % (i, ARG_TYPE_NAMES[atype] if atype < 11 else atype,
                                             asize, (sub.pos - aoff) // 8))
            cur.pos = aend
            args.append(arg)
        return args

    # -- main loop ---------------------------------------------------------------------------
    def run(self):
        data = self.data
        n = len(data)
        off = 0
        first = True
        if n % 8:
            self.violation(n - n % 8, 'archive length %d is not a multiple of 8' % n)
        if n < 8:
            self.violation(0, 'archive is shorter than the magic-number record')
            return self.trace
        while off + 8 <= n:
            self.rec_off = off
            (h,) = struct.unpack_from('<Q', data, off)
            rtype = bits(h, 0, 3)
            size = bits(h, 4, 35) if rtype == RT_LARGE else bits(h, 4, 15)
            if first:
                first = False
                if h != MAGIC_WORD:
                    self.violation(0, 'first record is not the magic-number record '
                                   '(first word 0x%016x, expected 0x%016x)' % (h, MAGIC_WORD))
            if size == 0:
                self.violation(off, 'record size field is 0 (fatal, parsing stops)')
                self.trace.truncated_at = off
                break
            if off + size * 8 > n:
                self.violation(off, 'record (type %d, %d words) runs past the end of the '
                               'archive (%d bytes): truncated' % (rtype, size, n))
                self.trace.truncated_at = off
                break
            rec = {'offset': off, 'words': size, 'rtype': rtype, 'kind': 'unknown',
                   'provider': self.cur.id, 'ok': True}
            cur = _Cursor(data, off, size, self)
            nerr = len(self.trace.errors)
            try:
                self.record(h, rtype, cur, rec)
                left = cur.remaining_words()
                if left:
                    if rec['kind'] == 'unknown':
                        pass
                    else:
                        self.violation(off, '%s record has %d leftover word(s) (size %d words)'
                                       % (rec['kind'], left, size))
            except RecordError as e:
                self.violation(off, '%s record: %s' % (RECORD_TYPE_NAMES.get(rtype, rtype), e))
                rec['ok'] = False     # unusable: a reader reports and skips it
            rec['conforms'] = len(self.trace.errors) == nerr
            self.trace.records.append(rec)
            off += size * 8
        if off < n and self.trace.truncated_at is None:
            self.trace.truncated_at = off
            self.violation(off, '%d trailing byte(s) after the last record' % (n - off))
        return self.trace

    def record(self, h, rtype, cur, rec):
        if rtype == RT_METADATA:
            self.metadata(h, cur, rec)
        elif rtype == RT_INIT:
            rec['kind'] = 'init'
            self.reserved(h, 16, 63, 'initialization header')
            tps = cur.word('ticks per second')
            if tps == 0:
                raise RecordError('ticks per second is 0')
            rec['ticks_per_second'] = tps
            self.cur.ticks_per_second = tps
        elif rtype == RT_STRING:
            rec['kind'] = 'string'
            idx = bits(h, 16, 30)
            self.reserved(h, 31, 31, 'string header')
            ln = bits(h, 32, 46)
            self.reserved(h, 47, 63, 'string header')
            s = cur.stream(ln, 'string record bytes')
            if ln > MAX_INLINE_STRING and self.strict_limits:
                self.violation(cur.base, 'string record of %d bytes exceeds %d'
                               % (ln, MAX_INLINE_STRING))
            rec['index'] = idx
            rec['string'] = s
            if idx == 0:
                raise RecordError('string record sets index 0')
            self.cur.strings[idx] = s
        elif rtype == RT_THREAD:
            rec['kind'] = 'thread'
            idx = bits(h, 16, 23)
            self.reserved(h, 24, 63, 'thread header')
            pid = cur.word('process koid')
            tid = cur.word('thread koid')
            rec.update(index=idx, pid=pid, tid=tid)
            if idx == 0:
                raise RecordError('thread record sets index 0')
            self.cur.threads[idx] = (pid, tid)
        elif rtype == RT_EVENT:
            self.event(h, cur, rec)
        elif rtype == RT_BLOB:
            rec['kind'] = 'blob'
            name = bits(h, 16, 31)
            ln = bits(h, 32, 46)
            self.reserved(h, 47, 47, 'blob header')
            btype = bits(h, 48, 55)
            self.reserved(h, 56, 63, 'blob header')
            rec['name'] = self.string_ref(cur, name, 'blob name')
            rec['blob_type'] = btype
            rec['payload'] = cur.stream(ln, 'blob payload')
            if btype not in (1, 2, 3):
                self.violation(cur.base, 'unknown blob type %d' % btype)
        elif rtype == RT_USEROBJ:
            rec['kind'] = 'userspace_object'
            pref = bits(h, 16, 23)
            nref = bits(h, 24, 39)
            nargs = bits(h, 40, 43)
            self.reserved(h, 44, 63, 'userspace object header')
            rec['pointer'] = cur.word('pointer')
            if pref == 0:
                rec['pid'] = cur.word('process koid')
            else:
                if pref not in self.cur.threads:
                    raise RecordError('process ref %d is not in the thread table' % pref)
                rec['pid'] = self.cur.threads[pref][0]
            rec['name'] = self.string_ref(cur, nref, 'userspace object name')
            rec['args'] = self.arguments(cur, nargs)
            self.cur.user_objects[(rec['pid'], rec['pointer'])] = rec['name']
        elif rtype == RT_KOBJ:
            rec['kind'] = 'kernel_object'
            otype = bits(h, 16, 23)
            nref = bits(h, 24, 39)
            nargs = bits(h, 40, 43)
            self.reserved(h, 44, 63, 'kernel object header')
            rec['obj_type'] = otype
            rec['koid'] = cur.word('koid')
            rec['name'] = self.string_ref(cur, nref, 'kernel object name')
            rec['args'] = self.arguments(cur, nargs)
            if otype == ZX_OBJ_TYPE_THREAD and not any(
                    a['name'] == b'process' and a['type'] == ARG_KOID for a in rec['args']):
                self.warn('thread kernel object without a koid argument "process"')
        elif rtype == RT_SCHED:
            self.scheduling(h, cur, rec)
        elif rtype == RT_LOG:
            rec['kind'] = 'log'
            ln = bits(h, 16, 30)
            self.reserved(h, 31, 31, 'log header')
            tref = bits(h, 32, 39)
            self.reserved(h, 40, 63, 'log header')
            rec['ts'] = cur.word('timestamp')
            rec['ts_ns'] = self.ticks_to_ns(rec['ts'])
            rec['pid'], rec['tid'] = self.thread_ref(cur, tref, 'log thread')
            rec['message'] = cur.stream(ln, 'log message')
        elif rtype == RT_LARGE:
            self.large(h, cur, rec)
        else:
            rec['kind'] = 'unknown'
            rec['ok'] = False
            self.violation(cur.base, 'unassigned record type %d (skipped by size)' % rtype)
            cur.pos = cur.end

    def metadata(self, h, cur, rec):
        mtype = bits(h, 16, 19)
        rec['metadata_type'] = mtype
        if mtype == 1:
            rec['kind'] = 'provider_info'
            pid = bits(h, 20, 51)
            ln = bits(h, 52, 59)
            self.reserved(h, 60, 63, 'provider info header')
            name = cur.stream(ln, 'provider name')
            rec.update(provider_id=pid, name=name)
            p = Provider(pid, name)
            self.trace.providers[pid] = p
            self.cur = p
            rec['provider'] = pid
        elif mtype == 2:
            rec['kind'] = 'provider_section'
            pid = bits(h, 20, 51)
            self.reserved(h, 52, 63, 'provider section header')
            rec['provider_id'] = pid
            if pid not in self.trace.providers:
                self.violation(cur.base, 'provider section for unknown provider id %d' % pid)
                self.trace.providers[pid] = Provider(pid)
            self.cur = self.trace.providers[pid]
            rec['provider'] = pid
        elif mtype == 3:
            rec['kind'] = 'provider_event'
            pid = bits(h, 20, 51)
            ev = bits(h, 52, 55)
            self.reserved(h, 56, 63, 'provider event header')
            rec.update(provider_id=pid, event_id=ev)
            if ev != 0:
                self.violation(cur.base, 'unknown provider event id %d' % ev)
        elif mtype == 4:
            titype = bits(h, 20, 23)
            rec['trace_info_type'] = titype
            if titype == 0:
                rec['kind'] = 'magic'
                if h != MAGIC_WORD:
                    self.violation(cur.base, 'magic-number record 0x%016x != 0x%016x'
                                   % (h, MAGIC_WORD))
            else:
                rec['kind'] = 'trace_info'
                rec['ok'] = False
                self.violation(cur.base, 'unknown trace-info type %d' % titype)
                cur.pos = cur.end
        else:
            rec['kind'] = 'metadata'
            rec['ok'] = False
            self.violation(cur.base, 'unknown metadata type %d' % mtype)
            cur.pos = cur.end

    def event(self, h, cur, rec):
        rec['kind'] = 'event'
        etype = bits(h, 16, 19)
        nargs = bits(h, 20, 23)
        tref = bits(h, 24, 31)
        cref = bits(h, 32, 47)
        nref = bits(h, 48, 63)
        rec['event_type'] = etype
        if etype > EV_FLOW_END:
            self.violation(cur.base, 'unknown event type %d (skipped by size)' % etype)
            cur.pos = cur.end
            rec['ok'] = False
            return
        rec['ts'] = cur.word('timestamp')
        rec['ts_ns'] = self.ticks_to_ns(rec['ts'])
        rec['pid'], rec['tid'] = self.thread_ref(cur, tref, 'event thread')
        rec['category'] = self.string_ref(cur, cref, 'event category')
        rec['name'] = self.string_ref(cur, nref, 'event name')
        rec['args'] = self.arguments(cur, nargs)
        payload = EVENT_PAYLOAD[etype]
        if payload:
            rec[payload] = cur.word(payload)
            if payload == 'end_ts':
                rec['end_ns'] = self.ticks_to_ns(rec['end_ts'])
        if etype == EV_INSTANT:
            left = cur.remaining_words()
            if left == 0:
                rec['scope'] = None
                self.warn('instant event without the scope word')
            else:
                sc = cur.word('scope')
                rec['scope'] = sc
                if sc > 2:
                    self.violation(cur.pos - 8, 'instant scope word is %d (0..2 allowed)' % sc)
        if etype == EV_COUNTER:
            for a in rec['args']:
                if a['type'] not in (ARG_INT32, ARG_UINT32, ARG_INT64, ARG_UINT64, ARG_DOUBLE):
                    self.warn('counter with a non-numeric argument')

    def scheduling(self, h, cur, rec):
        rec['kind'] = 'scheduling'
        sub = bits(h, 60, 63)
        rec['sched_type'] = sub
        if sub == 0:
            rec['cpu'] = bits(h, 16, 23)
            rec['out_state'] = bits(h, 24, 27)
            oref = bits(h, 28, 35)
            iref = bits(h, 36, 43)
            rec['out_prio'] = bits(h, 44, 51)
            rec['in_prio'] = bits(h, 52, 59)
            rec['ts'] = cur.word('timestamp')
            rec['ts_ns'] = self.ticks_to_ns(rec['ts'])
            rec['out_thread'] = self.thread_ref(cur, oref, 'outgoing thread')
            rec['in_thread'] = self.thread_ref(cur, iref, 'incoming thread')
            if rec['out_state'] > 5 or rec['out_state'] == 1:
                self.violation(cur.base, 'outgoing thread state %d is not valid'
                               % rec['out_state'])
        elif sub == 1:
            nargs = bits(h, 16, 19)
            rec['cpu'] = bits(h, 20, 35)
            rec['out_state'] = bits(h, 36, 39)
            self.reserved(h, 40, 59, 'context switch header')
            rec['ts'] = cur.word('timestamp')
            rec['ts_ns'] = self.ticks_to_ns(rec['ts'])
            rec['out_tid'] = cur.word('outgoing thread koid')
            rec['in_tid'] = cur.word('incoming thread koid')
            rec['args'] = self.arguments(cur, nargs)
            if rec['out_state'] > 5 or rec['out_state'] == 1:
                self.violation(cur.base, 'outgoing thread state %d is not valid'
                               % rec['out_state'])
        elif sub == 2:
            nargs = bits(h, 16, 19)
            rec['cpu'] = bits(h, 20, 35)
            self.reserved(h, 36, 59, 'thread wakeup header')
            rec['ts'] = cur.word('timestamp')
            rec['ts_ns'] = self.ticks_to_ns(rec['ts'])
            rec['tid'] = cur.word('woken thread koid')
            rec['args'] = self.arguments(cur, nargs)
        else:
            self.violation(cur.base, 'unknown scheduling record type %d' % sub)
            rec['ok'] = False
            cur.pos = cur.end

    def large(self, h, cur, rec):
        ltype = bits(h, 36, 39)
        rec['large_type'] = ltype
        if ltype != 0:
            rec['kind'] = 'large'
            rec['ok'] = False
            self.violation(cur.base, 'unknown large record type %d' % ltype)
            cur.pos = cur.end
            return
        rec['kind'] = 'large_blob'
        fmt = bits(h, 40, 43)
        self.reserved(h, 44, 63, 'large blob header')
        rec['format'] = fmt
        if rec['words'] * 8 > MAX_LARGE_RECORD_BYTES and self.strict_limits:
            self.violation(cur.base, 'large record of %d bytes exceeds %d'
                           % (rec['words'] * 8, MAX_LARGE_RECORD_BYTES))
        fh = cur.word('format header')
        if fmt == 0:
            cref = bits(fh, 0, 15)
            nref = bits(fh, 16, 31)
            nargs = bits(fh, 32, 35)
            tref = bits(fh, 36, 43)
            self.reserved(fh, 44, 63, 'large blob format header')
            rec['category'] = self.string_ref(cur, cref, 'large blob category')
            rec['name'] = self.string_ref(cur, nref, 'large blob name')
            rec['ts'] = cur.word('timestamp')
            rec['ts_ns'] = self.ticks_to_ns(rec['ts'])
            rec['pid'], rec['tid'] = self.thread_ref(cur, tref, 'large blob thread')
            rec['args'] = self.arguments(cur, nargs)
        elif fmt == 1:
            cref = bits(fh, 0, 15)
            nref = bits(fh, 16, 31)
            self.reserved(fh, 32, 63, 'large blob format header')
            rec['category'] = self.string_ref(cur, cref, 'large blob category')
            rec['name'] = self.string_ref(cur, nref, 'large blob name')
        else:
            self.violation(cur.base, 'unknown large blob format %d' % fmt)
            rec['ok'] = False
            cur.pos = cur.end
            return
        n = cur.word('blob size')
        rec['payload'] = cur.stream(n, 'large blob payload')


def decode(data, strict_limits=True):
    """Decode a whole archive (bytes). Never raises on bad input; see Trace.errors."""
    return Decoder(data, strict_limits).run()


def decode_file(path):
    with open(path, 'rb') as f:
        return decode(f.read())


def describe(rec):
    """One-line human description of a decoded record (for --records)."""
    k = rec['kind']
    parts = ['@%d' % rec['offset'], k]
    if k == 'event':
        parts.append(EVENT_TYPE_NAMES[rec['event_type']] if rec['event_type'] < 11
                     else str(rec['event_type']))
    for key in ('provider_id', 'index', 'name', 'category', 'ts', 'pid', 'tid', 'koid',
                'string', 'message', 'scope', 'id', 'counter_id', 'end_ts', 'event_id',
                'ticks_per_second', 'obj_type', 'sched_type', 'format'):
        if key in rec:
            parts.append('%s=%r' % (key, rec[key]))
    if rec.get('args'):
        parts.append('args=[%s]' % ', '.join('%r:%s=%r' % (a['name'], ARG_TYPE_NAMES[a['type']]
                                                           if a['type'] < 11 else a['type'],
                                                           a.get('value'))
                                              for a in rec['args']))
    if not rec['ok']:
        parts.append('(UNUSABLE)')
    elif not rec['conforms']:
        parts.append('(NONCONFORMING)')
    return ' '.join(parts)


# --- self-test: FXT.md §12 worked examples ---------------------------------------------------

def _hexbytes(s):
    return bytes.fromhex(s.replace(' ', '').replace('\n', ''))


def selftest():
    """Decode the worked examples of FXT.md §12; returns a list of failure messages."""
    fails = []

    def expect(cond, msg):
        if not cond:
            fails.append(msg)

    magic = _hexbytes('10 00 04 46 78 54 16 00')
    expect(struct.unpack('<Q', magic)[0] == MAGIC_WORD, '12.1 magic bytes')
    init = _hexbytes('21 00 00 00 00 00 00 00  00 ca 9a 3b 00 00 00 00')
    ex123 = _hexbytes('''
        94 00 10 00 03 80 05 80  e8 03 00 00 00 00 00 00  34 12 00 00 00 00 00 00
        78 56 00 00 00 00 00 00  63 61 74 00 00 00 00 00  68 65 6c 6c 6f 00 00 00
        21 00 01 80 2a 00 00 00  78 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00''')
    t = decode(magic + init + ex123)
    expect(t.ok, '12.3 decodes cleanly: %s' % t.errors)
    if len(t.records) == 3:
        m, i, e = t.records
        expect(m['kind'] == 'magic', '12.1 kind')
        expect(i['kind'] == 'init' and i['ticks_per_second'] == 10 ** 9, '12.2 init')
        expect(e['kind'] == 'event' and e['event_type'] == EV_INSTANT, '12.3 kind')
        expect(e['ts'] == 1000 and e['ts_ns'] == 1000, '12.3 ts')
        expect((e['pid'], e['tid']) == (0x1234, 0x5678), '12.3 thread')
        expect(e['category'] == b'cat' and e['name'] == b'hello', '12.3 strings')
        expect(len(e['args']) == 1 and e['args'][0]['name'] == b'x'
               and e['args'][0]['type'] == ARG_INT32 and e['args'][0]['value'] == 42,
               '12.3 argument')
        expect(e['scope'] == 0, '12.3 scope')
    else:
        fails.append('12.3: expected 3 records, got %d' % len(t.records))

    # doc-only form without the scope word (header 0x8005800300100084, size 8)
    ex123b = struct.pack('<Q', 0x8005800300100084) + ex123[8:64]
    t = decode(magic + ex123b)
    expect(t.ok and t.records[1]['scope'] is None, '12.3 without scope word')

    # 12.4 indexed refs
    def q(*ws):
        return b''.join(struct.pack('<Q', w) for w in ws)
    strs = q(0x0000000300010022) + b'cat\0\0\0\0\0'
    strs += q(0x0000000500020022) + b'hello\0\0\0'
    strs += q(0x0000000100030022) + b'x\0\0\0\0\0\0\0'
    thr = q(0x0000000000010033, 0x1234, 0x5678)
    ev = ev124 = _hexbytes('44 00 10 01 01 00 02 00') + q(1000, 0x0000002A00030011, 0)
    expect(struct.unpack('<Q', ev[:8])[0] == 0x0002000101100044, '12.4 header')
    t = decode(magic + strs + thr + ev)
    expect(t.ok, '12.4 decodes cleanly: %s' % t.errors)
    e = t.records[-1]
    expect(e.get('category') == b'cat' and e.get('name') == b'hello'
           and (e.get('pid'), e.get('tid')) == (0x1234, 0x5678)
           and e['args'][0]['name'] == b'x' and e['args'][0]['value'] == 42, '12.4 event')

    # 12.5 single-word headers
    t = decode(magic + q(0x0000000000110010))
    expect(t.ok and t.records[1]['kind'] == 'provider_info'
           and t.records[1]['provider_id'] == 1 and t.records[1]['name'] == b'', '12.5 pinfo')
    t = decode(magic + q(0x0030000000110020) + b'foo\0\0\0\0\0' + q(0x0000000000120010,
                                                                    0x0000000000130010))
    expect(t.ok and t.records[1]['name'] == b'foo', '12.5 pinfo foo')
    expect(t.records[2]['kind'] == 'provider_section' and t.records[2]['provider_id'] == 1,
           '12.5 section')
    expect(t.records[3]['kind'] == 'provider_event' and t.records[3]['event_id'] == 0
           and t.records[3]['provider_id'] == 1, '12.5 overflow')
    # bool true / int32 -1 args, name ref 1, in an instant event with indexed refs
    ev = q(4 | 5 << 4 | 2 << 20 | 1 << 24 | 1 << 32 | 1 << 48, 5, 0x0000000100010019,
           0xFFFFFFFF00010011, 2)
    t = decode(magic + q(0x0000000100010022) + b'a\0\0\0\0\0\0\0' + thr + ev)
    expect(t.ok, '12.5 args decode cleanly: %s' % t.errors)
    a = t.records[-1].get('args', [])
    expect(len(a) == 2 and a[0]['value'] is True and a[1]['value'] == -1
           and t.records[-1]['scope'] == 2, '12.5 bool/int32 values')

    # negative checks: the decoder must flag each violation, for the right reason
    def expect_violation(data, needle, msg):
        t = decode(data)
        expect(any(needle in e for e in t.errors), '%s (errors: %s)' % (msg, t.errors))
    expect_violation(magic + q(0x0000000000010033 | (1 << 40), 1, 2), 'reserved bits',
                     'reserved bit in a thread header must be flagged')
    expect_violation(magic + q(0x0000000300010022) + b'cat\0\0\0\0\1', 'non-zero padding',
                     'non-zero padding must be flagged')
    expect_violation(init + magic, 'not the magic', 'missing leading magic must be flagged')
    t = decode(magic + ex123[:40])
    expect(not t.ok and t.truncated_at == 8, 'truncation must be flagged')
    expect_violation(magic + q(0x0000000000010043, 1, 2, 0), 'leftover',
                     'leftover word in a thread record must be flagged')
    expect_violation(magic + strs + thr + q(0x0002000101100054, 1000, 0x0000002A00030011, 0, 0),
                     'leftover', 'two extra words after an instant must be flagged')
    expect_violation(magic + q(4 | 4 << 4 | 2 << 16 | 5 << 48, 1, 2, 3), 'not in provider',
                     'unknown string index must be flagged')
    expect_violation(magic + q(4 | 6 << 4 | 2 << 16 | 1 << 20, 1, 2, 3, 0x2A00000021, 0),
                     'has size 2 words but',
                     'argument size mismatch must be flagged')
    expect_violation(magic + q(0x21, 0), 'ticks per second is 0', 'zero tick rate')
    expect_violation(magic + q(0x2A, 0), 'unassigned record type',
                     'record types 10..14 are unassigned')
    expect_violation(magic + q(0), 'size field is 0', 'size 0 is fatal')
    return fails


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description='Strict FXT decoder / conformance checker')
    ap.add_argument('file', nargs='?', help='FXT archive ("-" = stdin)')
    ap.add_argument('--records', action='store_true', help='print every decoded record')
    ap.add_argument('--selftest', action='store_true', help='check the FXT.md §12 examples')
    ns = ap.parse_args(argv)
    if ns.selftest:
        fails = selftest()
        for f in fails:
            print('selftest FAIL:', f)
        print('selftest: %s' % ('OK' if not fails else '%d failure(s)' % len(fails)))
        if fails or not ns.file:
            return 1 if fails else 0
    if not ns.file:
        ap.error('FILE is required')
    try:
        if ns.file == '-':
            data = sys.stdin.buffer.read()
        else:
            with open(ns.file, 'rb') as f:
                data = f.read()
    except OSError as e:
        print('fxt_decode: cannot read %s: %s' % (ns.file, e.strerror), file=sys.stderr)
        return 2
    t = decode(data)
    if ns.records:
        for r in t.records:
            print(describe(r))
    counts = t.count_by_kind()
    print('records: %d (%s)' % (len(t.records),
                                ', '.join('%s=%d' % kv for kv in sorted(counts.items()))))
    for w in t.warnings[:20]:
        print('warning:', w)
    if len(t.warnings) > 20:
        print('warning: ... %d more' % (len(t.warnings) - 20))
    for e in t.errors[:50]:
        print('VIOLATION:', e)
    if len(t.errors) > 50:
        print('VIOLATION: ... %d more' % (len(t.errors) - 50))
    print('verdict: %s' % ('CONFORMS' if t.ok else 'DOES NOT CONFORM (%d violation(s))'
                           % len(t.errors)))
    return 0 if t.ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
