#!/usr/bin/env python3
"""check_convert.py ARCHIVE JSON: check `trace convert` output event by event.

Decodes ARCHIVE with the independent decoder tests/tools/fxt_decode.py, derives the JSON events
that docs/convert-json.md requires, in archive order, and compares them with JSON (parsed with the
json module; numbers are compared by their exact text). Fails (exit 1) on any mismatch, missing
or extra event. Exit 2 on usage / unreadable input.

Also usable as a module: check(archive_bytes, json_text) -> list of failure strings.
"""

import base64
import json
import math
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tools'))
import fxt_decode as fxt  # noqa: E402

MAX_FAILS = 25


# --- JSON loading that keeps key order, duplicate keys and number text ----------------------

class JObj(list):
    """A JSON object as its list of (key, value) pairs, in document order."""

    def get(self, key, default=None):
        for k, v in self:
            if k == key:
                return v
        return default

    def keys(self):
        return [k for k, _ in self]


class JNum:
    def __init__(self, text, is_int):
        self.text = text
        self.is_int = is_int

    def __repr__(self):
        return self.text


def load_json(text):
    return json.loads(text, object_pairs_hook=JObj,
                      parse_int=lambda s: JNum(s, True),
                      parse_float=lambda s: JNum(s, False),
                      parse_constant=lambda s: JNum(s, False))


def plain(v):
    """JObj/JNum tree -> plain Python, for messages."""
    if isinstance(v, JObj):
        return {k: plain(x) for k, x in v}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, JNum):
        return v.text
    return v


# --- expected values -------------------------------------------------------------------------

class Exp:
    """An expected JSON value: kind in str, int, num (exact number text), null, bool, obj."""

    def __init__(self, kind, value):
        self.kind = kind
        self.value = value

    def __repr__(self):
        if self.kind == 'obj':
            return '{%s}' % ','.join('%s:%r' % kv for kv in self.value)
        return repr(self.value)


def S(s):
    return Exp('str', s)


def I(n):
    return Exp('num', str(n))


def OBJ(pairs):
    return Exp('obj', pairs)


def text(raw):
    return fxt.decode_utf8_replace(raw)


def fmt_us(ns):
    """ns (integer, may be negative) -> microseconds with exactly three fractional digits."""
    sign = '-' if ns < 0 else ''
    a = abs(ns)
    return '%s%d.%03d' % (sign, a // 1000, a % 1000)


def fmt_double(v):
    if math.isnan(v):
        return S('NaN')
    if math.isinf(v):
        return S('Infinity' if v > 0 else '-Infinity')
    for p in (15, 16, 17):     # the fewest digits that read back exactly
        fixed = '%.*g' % (p, v)
        if float(fixed) == v:
            break
    m, e = ('%.*e' % (p - 1, v)).split('e')
    m = m.rstrip('0').rstrip('.')
    exponent = '%se%d' % (m, int(e))
    small = v != 0 and abs(v) < 1e-3          # no 20-digit fractions (Perfetto's parser)
    return Exp('num', exponent if small or len(exponent) < len(fixed) else fixed)


# --- pid/tid: koids >= 2^32 (no Linux id, nor a merged one) get synthetic ids 2^31 - 1 - n in
# order of first use --------------------------------------------------------------------------

KOID_LIMIT = 1 << 32


class KoidMap:
    """The converter's table (src/trace/json_koids.c), used in the same record order."""

    def __init__(self):
        self.ids = {}

    def __call__(self, koid):
        if koid < KOID_LIMIT:
            return koid
        if koid not in self.ids:
            self.ids[koid] = max(0x7fffffff - len(self.ids), 0x7fc00000)
        return self.ids[koid]


def koid_arg(args, name):
    for a in args:
        if a['name'] == name and a['type'] == fxt.ARG_KOID:
            return a['value']
    return None


def map_systrace_koids(rec, ids):
    """The koids a systrace line names, mapped in the order json_systrace.c writes them."""
    if rec['kind'] == 'scheduling':
        st = rec['sched_type']
        if st == 2:
            waker = koid_arg(rec['args'], b'waker')
            ids(waker if waker is not None else 0)
            ids(rec['tid'])
        elif st in (0, 1):
            if st == 0:
                (out_pid, out_tid), (_, in_tid) = rec['out_thread'], rec['in_thread']
            else:
                out_pid, out_tid, in_tid = 0, rec['out_tid'], rec['in_tid']
            ids(out_tid)
            if out_pid != 0 or out_tid == 0:
                ids(out_pid)
            ids(in_tid)
    elif (rec['kind'] == 'event' and rec['event_type'] == fxt.EV_INSTANT
          and rec['category'] == b'kernel:sched'
          and rec['name'] in (b'sched_waking', b'sched_wakeup', b'sched_wakeup_new')):
        waker = koid_arg(rec['args'], b'waker_tid')
        ids(waker if waker is not None else 0)
        ids(rec['tid'])


NUMERIC = (fxt.ARG_INT32, fxt.ARG_UINT32, fxt.ARG_INT64, fxt.ARG_UINT64, fxt.ARG_DOUBLE)


def arg_value(a):
    t = a['type']
    v = a['value']
    if t == fxt.ARG_NULL:
        return Exp('null', None)
    if t == fxt.ARG_BOOL:
        return Exp('bool', v)
    if t in (fxt.ARG_INT32, fxt.ARG_UINT32, fxt.ARG_INT64, fxt.ARG_UINT64):
        return I(v)
    if t == fxt.ARG_DOUBLE:
        return fmt_double(v)
    if t == fxt.ARG_STRING:
        return S(text(v))
    if t == fxt.ARG_POINTER:
        return S('0x%x' % v)
    if t == fxt.ARG_KOID:
        return S('#%d' % v)
    if t == fxt.ARG_BLOB:
        return S(base64.b64encode(v).decode('ascii'))
    raise AssertionError('unexpected argument type %d' % t)


def counter_value(a):
    """A counter keeps integers and finite doubles only."""
    return a['type'] in NUMERIC and not (a['type'] == fxt.ARG_DOUBLE and not math.isfinite(a['value']))


# Typed events (docs/event-formats.md): the fields a record holds as raw bytes, by the format
# a "trace_event_format" blob gave for (provider, category, name). Element types whose size
# trace convert knows, for arrays of integers (docs/convert-json.md).
INT_SIZES = {'char': 1, 'signed char': 1, 'unsigned char': 1, 'u8': 1, 's8': 1, 'uint8_t': 1,
             'int8_t': 1, 'bool': 1, 'short': 2, 'unsigned short': 2, 'u16': 2, 's16': 2,
             'uint16_t': 2, 'int16_t': 2, 'int': 4, 'unsigned int': 4, 'unsigned': 4, 'u32': 4,
             's32': 4, 'uint32_t': 4, 'int32_t': 4, 'long': 8, 'unsigned long': 8,
             'long long': 8, 'unsigned long long': 8, 'u64': 8, 's64': 8, 'uint64_t': 8,
             'int64_t': 8, 'size_t': 8, 'pid_t': 4}


def parse_format(payload):
    """-> ((category, name), {field name: (type, count, data_loc, size, signed)}) or None."""
    try:
        lines = payload.decode('utf-8').split('\n')
    except UnicodeDecodeError:
        return None
    head, fields = {}, {}
    for line in lines:
        line = line.strip()
        if line.startswith('field:'):
            parts = dict(p.strip().split(':', 1) for p in line.split(';') if ':' in p)
            decl = parts.get('field', '')
            data_loc = decl.startswith('__data_loc ')
            if data_loc:
                decl = decl[len('__data_loc '):]
            ctype, _, fname = decl.rpartition(' ')   # "float fa[3]", "double[] dd"
            count = 0
            if fname.endswith(']') and '[' in fname:
                fname, dim = fname[:-1].split('[', 1)
                count = int(dim) if dim else 0
            if ctype.endswith('[]'):
                ctype = ctype[:-2]
            fields[fname] = (ctype.strip(), count, data_loc, int(parts.get('size', 0)),
                             parts.get('signed') == '1')
        elif ':' in line and not head.get('format'):
            k, v = line.split(':', 1)
            head[k.strip()] = v.strip()
    if 'category' not in head or 'name' not in head:
        return None
    return (head['category'], head['name']), fields


def typed_value(field, raw):
    """The JSON value of a raw-byte field (docs/convert-json.md), or None: a string."""
    ctype, count, data_loc, size, signed = field
    if ctype == 'char':
        return None
    array = count > 0 or data_loc
    n = len(raw)
    es = INT_SIZES.get(ctype, 0)
    if array and es and n % es == 0:
        vals = []
        for i in range(0, n, es):
            v = int.from_bytes(raw[i:i + es], 'little', signed=signed)
            vals.append(I(v))
        return Exp('array', vals)
    if array and ctype in ('float', 'double') and n % (4 if ctype == 'float' else 8) == 0:
        fmt, es = ('<f', 4) if ctype == 'float' else ('<d', 8)
        return Exp('array', [fmt_double(struct.unpack(fmt, raw[i:i + es])[0])
                             for i in range(0, n, es)])
    if not array and size != n:
        return None
    return S(raw.hex())


def args_pairs(args, numeric_only=False, fields=None):
    out = []
    for a in args:
        if a.get('unknown'):
            continue
        if numeric_only and not counter_value(a):
            continue
        v = None
        if fields and a['type'] == fxt.ARG_STRING and text(a['name']) in fields:
            v = typed_value(fields[text(a['name'])], a['value'])
        out.append(('args_key', text(a['name']), v if v is not None else arg_value(a)))
    return [(k, v) for _, k, v in out]


PH = {fxt.EV_INSTANT: 'i', fxt.EV_COUNTER: 'C', fxt.EV_DUR_BEGIN: 'B', fxt.EV_DUR_END: 'E',
      fxt.EV_DUR_COMPLETE: 'X', fxt.EV_ASYNC_BEGIN: 'b', fxt.EV_ASYNC_INSTANT: 'n',
      fxt.EV_ASYNC_END: 'e', fxt.EV_FLOW_BEGIN: 's', fxt.EV_FLOW_STEP: 't',
      fxt.EV_FLOW_END: 'f'}
SCOPE = {None: 't', 0: 't', 1: 'p', 2: 'g'}


def expected_event(rec, ids, fields=None):
    """Expected JSON object (list of (key, Exp)) for an event or log record, or None; `fields`:
    the typed event's format fields, when a format names its (provider, category, name)."""
    if rec['kind'] == 'log':
        return [('cat', S('log')), ('name', S('log')), ('ph', S('i')),
                ('ts', Exp('num', fmt_us(rec['ts_ns']))), ('pid', I(ids(rec['pid']))),
                ('tid', I(ids(rec['tid']))), ('s', S('g')),
                ('args', OBJ([('message', S(text(rec['message'])))]))]
    et = rec['event_type']
    if et == fxt.EV_COUNTER and not any(counter_value(a) for a in rec['args']
                                        if not a.get('unknown')):
        return None             # left out (and counted): no finite numeric value
    ev = [('cat', S(text(rec['category']))), ('name', S(text(rec['name']))), ('ph', S(PH[et])),
          ('ts', Exp('num', fmt_us(rec['ts_ns']))), ('pid', I(ids(rec['pid']))),
          ('tid', I(ids(rec['tid'])))]
    if et == fxt.EV_INSTANT:
        ev.append(('s', S(SCOPE[rec['scope']])))
    elif et == fxt.EV_COUNTER:
        if rec['counter_id'] != 0:
            ev.append(('id', S('0x%x' % rec['counter_id'])))
    elif et == fxt.EV_DUR_COMPLETE:
        ev.append(('dur', Exp('num', fmt_us(rec['end_ns'] - rec['ts_ns']))))
    elif et <= fxt.EV_ASYNC_END and et >= fxt.EV_ASYNC_BEGIN:   # process-scoped in FXT
        ev.append(('id2', OBJ([('local', S('0x%x' % rec['id']))])))
    elif et >= fxt.EV_FLOW_BEGIN:
        ev.append(('id', S('0x%x' % rec['id'])))
        if et == fxt.EV_FLOW_END:
            ev.append(('bp', S('e')))
    args = args_pairs(rec['args'], numeric_only=(et == fxt.EV_COUNTER), fields=fields)
    if args:
        ev.append(('args', OBJ(args)))
    return ev


def expected_complete(begin, end_rec):
    """A begin's expected event (held back) closed by an end at its timestamp: the complete event
    of duration 0 with the arguments of both (docs/convert-json.md)."""
    ev = [(k, S('X') if k == 'ph' else v) for k, v in begin if k != 'args']
    ev.insert(6, ('dur', Exp('num', fmt_us(0))))
    args = [v.value for k, v in begin if k == 'args']
    pairs = (args[0] if args else []) + args_pairs(end_rec['args'])
    if pairs:
        ev.append(('args', OBJ(pairs)))
    return ev


class Held:
    """The converter's held-back duration begin (json_events.c)."""

    def __init__(self, index, rec):
        self.index = index
        self.rec = rec

    def same_place(self, rec):
        b = self.rec
        return (rec['provider'] == b['provider'] and rec['pid'] == b['pid']
                and rec['tid'] == b['tid'] and rec['ts_ns'] == b['ts_ns'])

    def closed_by(self, rec):
        return (rec['event_type'] == fxt.EV_DUR_END and self.same_place(rec)
                and rec['category'] == self.rec['category'] and rec['name'] == self.rec['name'])


def expected_metadata(rec, ids):
    name = text(rec['name'])
    if not name:
        return None
    args = [('name', S(name))]
    if rec['koid'] >= KOID_LIMIT:      # a synthetic pid/tid: the koid stays visible
        args.append(('koid', S('#%d' % rec['koid'])))
    if rec['obj_type'] == fxt.ZX_OBJ_TYPE_PROCESS:
        return [('cat', S('__metadata')), ('name', S('process_name')), ('ph', S('M')), ('pid', I(ids(rec['koid']))),
                ('tid', I(0)), ('args', OBJ(args))]
    if rec['obj_type'] == fxt.ZX_OBJ_TYPE_THREAD:
        proc = koid_arg(rec['args'], b'process')
        if proc is None:
            return None
        return [('cat', S('__metadata')), ('name', S('thread_name')), ('ph', S('M')), ('pid', I(ids(proc))),
                ('tid', I(ids(rec['koid']))), ('args', OBJ(args))]
    return None


class Overflow:
    def __init__(self, rec, provider_name, lo):
        self.rec = rec
        self.provider_id = rec['provider_id']
        self.provider_name = provider_name
        self.lo = lo              # index (among non-overflow events) at the archive position
        self.hi = None            # index of the event whose ts it takes (None: the end)
        self.ts_candidates = []   # acceptable ts values (ns)

    def expected(self, ts_ns):
        return [('cat', S('fxtrace')), ('name', S('buffer overflow')), ('ph', S('i')),
                ('ts', Exp('num', fmt_us(ts_ns))), ('pid', I(0)), ('tid', I(0)), ('s', S('g')),
                ('args', OBJ([('provider_id', I(self.provider_id)),
                              ('provider_name', S(self.provider_name))]))]


def build_expected(trace):
    """-> (list of expected non-overflow events with their record, list of Overflow)."""
    events = []
    overflows = []
    pending = []                  # overflows whose event-ts is not known yet
    pending_any = []              # same, for the "any timestamped record" reading
    last_ts = None
    last_any_ts = None
    ids = KoidMap()
    held = None
    formats = {}                  # (provider, category, name) -> fields; a later one replaces
    for rec in trace.records:
        if not rec['ok']:
            continue
        k = rec['kind']
        if k == 'blob' and rec['blob_type'] == 1 and rec['name'] == b'trace_event_format':
            parsed = parse_format(rec['payload'])
            if parsed:
                formats[(rec['provider'],) + parsed[0]] = parsed[1]
        if 'ts_ns' in rec:
            for o in [o for o in pending_any if o.provider_id == rec['provider']]:
                o.ts_candidates.append(rec['ts_ns'])
                pending_any.remove(o)
            last_any_ts = rec['ts_ns']
        if held and k == 'event':
            if held.closed_by(rec):
                b = events[held.index]
                events[held.index] = (b[0], expected_complete(b[1], rec))
                held = None
                last_ts = rec['ts_ns']
                continue
            if not (rec['event_type'] >= fxt.EV_FLOW_BEGIN and held.same_place(rec)):
                held = None
        elif k in ('log', 'kernel_object') or (k == 'provider_event' and rec['event_id'] == 0):
            held = None
        if k == 'provider_event' and rec['event_id'] == 0:
            p = trace.providers.get(rec['provider_id'])
            o = Overflow(rec, text(p.name) if p else '', len(events))
            overflows.append(o)
            pending.append(o)
            pending_any.append(o)
        elif k in ('event', 'log'):
            for o in [o for o in pending if o.provider_id == rec['provider']]:
                o.ts_candidates.append(rec['ts_ns'])
                o.hi = len(events)
                pending.remove(o)
            if k == 'event' and rec['event_type'] == fxt.EV_DUR_BEGIN:
                held = Held(len(events), rec)
            fields = formats.get((rec['provider'], text(rec['category']),
                                  text(rec['name']))) if k == 'event' else None
            ev = expected_event(rec, ids, fields)
            if ev:
                events.append((rec, ev))
            last_ts = rec['ts_ns']
            map_systrace_koids(rec, ids)
        elif k == 'kernel_object':
            m = expected_metadata(rec, ids)
            if m:
                events.append((rec, m))
        elif k == 'scheduling':
            map_systrace_koids(rec, ids)
    for o in pending:
        o.hi = len(events)
        o.ts_candidates.append(last_ts if last_ts is not None else 0)
        if last_any_ts is not None:
            o.ts_candidates.append(last_any_ts)
        if last_ts is None:
            o.ts_candidates.append(0)
    return events, overflows


# --- comparison ------------------------------------------------------------------------------

def compare(exp, act, path, out):
    if exp.kind == 'obj':
        if not isinstance(act, JObj):
            out.append('%s: expected an object %r, got %r' % (path, exp, plain(act)))
            return
        ek = [k for k, _ in exp.value]
        ak = act.keys()
        if ek != ak:
            out.append('%s: keys %s, expected %s (in this order)' % (path, ak, ek))
        for (k, e), (k2, a) in zip(exp.value, act):
            if k == k2:
                compare(e, a, '%s.%s' % (path, k), out)
        return
    if exp.kind == 'str':
        if not isinstance(act, str) or act != exp.value:
            out.append('%s: %r, expected %r' % (path, plain(act), exp.value))
    elif exp.kind == 'num':
        if not isinstance(act, JNum) or act.text != exp.value:
            out.append('%s: %r, expected the number %s' % (path, plain(act), exp.value))
    elif exp.kind == 'null':
        if act is not None:
            out.append('%s: %r, expected null' % (path, plain(act)))
    elif exp.kind == 'bool':
        if act is not exp.value:
            out.append('%s: %r, expected %s' % (path, plain(act), 'true' if exp.value else 'false'))
    elif exp.kind == 'array':
        if not isinstance(act, list) or isinstance(act, JObj) or len(act) != len(exp.value):
            out.append('%s: %r, expected an array of %d' % (path, plain(act), len(exp.value)))
            return
        for i, (e, a) in enumerate(zip(exp.value, act)):
            compare(e, a, '%s[%d]' % (path, i), out)
    else:
        raise AssertionError(exp.kind)


def compare_event(exp_pairs, act, where):
    out = []
    compare(OBJ(exp_pairs), act, where, out)
    return out


def looks_like_overflow(ev):
    return (isinstance(ev, JObj) and ev.get('cat') == 'fxtrace'
            and ev.get('name') == 'buffer overflow' and ev.get('ph') == 'i')


def check_text_shape(jtext, fails):
    """docs/convert-json.md: fixed head/tail, one event object per line; escaping rules."""
    lines = jtext.split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    head = '{"displayTimeUnit":"ns","traceEvents":['
    if not lines or lines[0] != head:
        fails.append('first line is %r, expected %r' % (lines[0][:80] if lines else '', head))
        return
    # kernel data: `],` then one line `"systemTraceEvents":"…"}` (json_systrace.c)
    systrace = (len(lines) >= 3 and lines[-2] == '],' and
                lines[-1].startswith('"systemTraceEvents":"') and lines[-1].endswith('"}'))
    if lines[-1] != ']}' and not systrace:
        fails.append('last line is %r, expected "]}"' % lines[-1][:80])
        return
    body = lines[1:-2] if systrace else lines[1:-1]
    for i, ln in enumerate(body):
        s = ln[:-1] if (i < len(body) - 1 and ln.endswith(',')) else ln
        try:
            v = load_json(s)
        except ValueError as e:
            fails.append('line %d is not one JSON event object (%s): %r' % (i + 2, e, ln[:100]))
            return
        if not isinstance(v, JObj):
            fails.append('line %d is not an object' % (i + 2))
            return
    if '\x7f' in jtext:
        fails.append('raw U+007F in the output (must be \\u007f)')
    low = jtext.lower()
    for named, code in (('\\b', '\\u0008'), ('\\f', '\\u000c'), ('\\n', '\\u000a'),
                        ('\\r', '\\u000d'), ('\\t', '\\u0009')):
        # count escapes of the form \uXXXX that are not themselves escaped backslashes
        idx = low.find(code)
        while idx != -1:
            nb = 0
            j = idx - 1
            while j >= 0 and low[j] == '\\':
                nb += 1
                j -= 1
            if nb % 2 == 0:
                fails.append('%s written as %s; docs require %s' % (code, code, named))
                break
            idx = low.find(code, idx + 1)


def check(archive, jtext, require_conformance=False):
    """Returns a list of failure messages (empty: the JSON matches the archive)."""
    fails = []
    trace = fxt.decode(archive)
    if require_conformance and trace.errors:
        fails.extend('archive: ' + e for e in trace.errors[:10])
    try:
        doc = load_json(jtext)
    except ValueError as e:
        return fails + ['JSON does not parse: %s' % e]
    check_text_shape(jtext, fails)
    n_sched = sum(1 for r in trace.records if r['kind'] == 'scheduling' and r['ok'])
    if isinstance(doc, JObj) and doc.keys() == ['displayTimeUnit', 'traceEvents',
                                                'systemTraceEvents']:
        text = doc.get('systemTraceEvents')
        if not isinstance(text, str):
            return fails + ['systemTraceEvents must be a string (Perfetto rejects anything else)']
        lines = [ln for ln in text.split('\n') if ln and not ln.startswith('#')]
        n_lines = sum(1 for ln in lines if ': sched_switch: ' in ln or
                      (': sched_waking: ' in ln and ') [' in ln))
        if n_lines < n_sched:
            fails.append('systemTraceEvents has %d scheduling lines for %d scheduling records'
                         % (n_lines, n_sched))
    elif n_sched:
        fails.append('%d scheduling records but no systemTraceEvents string' % n_sched)
    if not isinstance(doc, JObj) or doc.keys() not in (
            ['displayTimeUnit', 'traceEvents'],
            ['displayTimeUnit', 'traceEvents', 'systemTraceEvents']):
        return fails + ['top level must be {"displayTimeUnit":…,"traceEvents":[…]}, got keys %s'
                        % (doc.keys() if isinstance(doc, JObj) else type(doc).__name__)]
    if doc.get('displayTimeUnit') != 'ns':
        fails.append('displayTimeUnit is %r, expected "ns"' % plain(doc.get('displayTimeUnit')))
    evs = doc.get('traceEvents')
    if not isinstance(evs, list):
        return fails + ['traceEvents is not an array']

    expected, overflows = build_expected(trace)
    j = 0          # next expected (non-overflow) event
    oi = 0         # next expected overflow
    for n, act in enumerate(evs):
        if len(fails) >= MAX_FAILS:
            break
        where = 'traceEvents[%d]' % n
        if oi < len(overflows) and looks_like_overflow(act) and \
                overflows[oi].lo <= j <= overflows[oi].hi:
            o = overflows[oi]
            oi += 1
            ts = act.get('ts')
            cands = [c for c in o.ts_candidates if isinstance(ts, JNum) and ts.text == fmt_us(c)]
            use = cands[0] if cands else o.ts_candidates[0]
            errs = compare_event(o.expected(use), act, where + ' (buffer overflow @%d)'
                                 % o.rec['offset'])
            if errs:
                fails.extend(errs)
                fails.append('%s: buffer-overflow instant; acceptable ts: %s'
                             % (where, [fmt_us(c) for c in o.ts_candidates]))
                break
            continue
        if j >= len(expected):
            fails.append('%s: extra event %s (all %d expected events already matched)'
                         % (where, json.dumps(plain(act))[:300], len(expected)))
            break
        rec, exp = expected[j]
        j += 1
        errs = compare_event(exp, act, '%s (%s @%d)' % (where, rec['kind'], rec['offset']))
        if errs:
            fails.extend(errs)
            fails.append('%s: got      %s' % (where, json.dumps(plain(act))[:400]))
            fails.append('%s: expected %s' % (where, exp))
            fails.append('%s: record   %s' % (where, fxt.describe(rec)[:400]))
            break
    else:
        if j < len(expected):
            rec, exp = expected[j]
            fails.append('missing %d event(s); the first one: %s (from %s)'
                         % (len(expected) - j, exp, fxt.describe(rec)[:300]))
        if oi < len(overflows):
            fails.append('missing %d buffer-overflow instant(s); the first from the record at '
                         'offset %d' % (len(overflows) - oi, overflows[oi].rec['offset']))
    return fails


def main(argv):
    if len(argv) != 2:
        print('usage: check_convert.py ARCHIVE JSON', file=sys.stderr)
        return 2
    try:
        with open(argv[0], 'rb') as f:
            archive = f.read()
        with open(argv[1], 'rb') as f:
            raw = f.read()
    except OSError as e:
        print('check_convert: %s: %s' % (e.filename, e.strerror), file=sys.stderr)
        return 2
    try:
        jtext = raw.decode('utf-8')
    except UnicodeDecodeError as e:
        print('FAIL: JSON output is not valid UTF-8: %s' % e)
        return 1
    fails = check(archive, jtext)
    trace = fxt.decode(archive)
    expected, overflows = build_expected(trace)
    if trace.errors:
        print('note: the archive has %d conformance violation(s) (%d record(s) unusable); '
              'run fxt_decode.py for details' % (len(trace.errors),
                                                 sum(1 for r in trace.records if not r['ok'])))
    if fails:
        for f in fails:
            print('FAIL:', f)
        return 1
    print('check_convert: OK, %d events and %d buffer-overflow instants match (%d records)'
          % (len(expected), len(overflows), len(trace.records)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
