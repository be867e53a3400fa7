#!/usr/bin/env python3
"""`trace convert`'s JSON as Perfetto's and Catapult's JSON importers read it: test_convert_readers.py
PATH_TO_TRACE

Hand-built archives (test_cli.Writer) for the defects an audit of the importers' sources found
(docs/convert-json.md): pid/tid values no importer can hold, a begin and end at one timestamp that
Perfetto's sorter swaps, process-scoped async ids, counters without a finite numeric value,
doubles that Perfetto's number parser misreads, metadata events without a category; and the
JSON of typed events' raw-byte fields (structs and arrays). Each test
checks the property the importers need, and the whole output against check_convert.py.
Python 3 standard library only."""

import json
import math
import os
import re
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tools'))
sys.path.insert(0, HERE)
import fxt_decode as fxt  # noqa: E402
import fxtest  # noqa: E402
import test_cli as cli  # noqa: E402
from fxtest import read_bytes, run_tests, status, write_bytes  # noqa: E402

Writer = cli.Writer


def check(cond, msg):
    return fxtest.check(cond, msg, '  ')


def convert(data, name):
    """Writes the archive, converts it (exit 0), checks it with check_convert.py; -> (events,
    JSON text, stderr)."""
    arc, js = cli.path(name + '.fxt'), cli.path(name + '.json')
    write_bytes(arc, data)
    t = fxt.decode(data)
    check(t.ok, '%s: the archive does not conform (test bug): %s' % (name, t.errors[:5]))
    rc, err = cli.convert_ok(arc, js, name)
    text = read_bytes(js).decode()
    cli.check_convert_ok(arc, js, name)
    doc = json.loads(text)
    return doc['traceEvents'], text, err, doc


VT1, VT2 = (1 << 63) | 1, (1 << 63) | 2            # virtual threads (id | 1 << 63)
IRQ = 0x800000007f000000                            # the kernel:irq pseudo process
REAL_MAX = (1 << 22) - 1                            # the largest Linux pid (PID_MAX_LIMIT - 1)
MERGED = 5 * (1 << 22) + 4                          # trace merge's pid 4 of its input 5


def test_large_koids():
    """Koids >= 2^32 get synthetic ids below 2^31, distinct from each other, from the real ids
    and from trace merge's (i x 2^22 + pid), the same in every event, M event and systrace line;
    the M event keeps the koid. Koids below 2^32 stay as they are."""
    w = Writer()
    w.provider_info(1, b'vt').init(10 ** 9)
    w.string(1, b'gpu').string(2, b'work')
    w.thread(1, 100, VT1).thread(2, 100, VT2).thread(3, 100, REAL_MAX)
    w.thread(4, IRQ, IRQ + 1).thread(5, IRQ, IRQ + 2).thread(6, MERGED, MERGED + 3)
    w.kobj(1, 100, b'app')
    w.kobj(2, VT1, b'queue-1', [(b'process', fxt.ARG_KOID, 100)])
    w.kobj(2, VT2, b'queue-2', [(b'process', fxt.ARG_KOID, 100)])
    w.kobj(1, IRQ, b'kernel:irq')
    # two overlapping vthread slices: distinct tracks, or Catapult's B/E pairing fails
    w.event(fxt.EV_DUR_BEGIN, 1000, 1, 1, 2)
    w.event(fxt.EV_DUR_BEGIN, 1500, 2, 1, 2)
    w.event(fxt.EV_DUR_END, 2000, 1, 1, 2)
    w.event(fxt.EV_DUR_END, 2500, 2, 1, 2)
    w.event(fxt.EV_DUR_COMPLETE, 3000, 3, 1, 2, payload=3100)
    w.event(fxt.EV_DUR_COMPLETE, 3000, 4, 1, 2, payload=3100)   # irq on two CPUs
    w.event(fxt.EV_DUR_COMPLETE, 3000, 5, 1, 2, payload=3100)
    w.event(fxt.EV_DUR_COMPLETE, 3000, 6, 1, 2, payload=3100)   # a merged archive's thread
    w.log(3200, 1, b'on a vthread')
    w.legacy_cswitch(3300, 0, 3, (IRQ, IRQ + 1))      # a systrace line naming a large koid
    evs, text, err, doc = convert(w.bytes(), 'koids')
    ids = [(e['pid'], e['tid']) for e in evs]
    check(all(0 <= p < 2 ** 31 and 0 <= t < 2 ** 31 for p, t in ids),
          'koids: pid/tid values >= 2^31: %s' % ids)
    big = re.findall(r'"(?:pid|tid)":(\d+)', text)
    check(all(int(v) < 2 ** 31 for v in big), 'koids: raw pid/tid text >= 2^31: %s' % big)
    meta = {e['args']['name']: e for e in evs if e['ph'] == 'M'}
    q1, q2 = meta['queue-1'], meta['queue-2']
    check(q1['pid'] == 100 and q2['pid'] == 100, 'koids: vthreads stay in their process')
    check(q1['tid'] != q2['tid'] and min(q1['tid'], q2['tid']) > REAL_MAX,
          'koids: vthread tids %d, %d must differ and differ from real ids' % (q1['tid'],
                                                                               q2['tid']))
    check(q1['args'].get('koid') == '#%d' % VT1 and q2['args'].get('koid') == '#%d' % VT2,
          'koids: the M events keep the koids: %s %s' % (q1['args'], q2['args']))
    irq = meta['kernel:irq']
    check(irq['pid'] > REAL_MAX and irq['args'].get('koid') == '#%d' % IRQ,
          'koids: irq process %s' % irq)
    slices = [e for e in evs if e['ph'] in 'BE']
    check([e['tid'] for e in slices] == [q1['tid'], q2['tid'], q1['tid'], q2['tid']],
          'koids: the vthread slices are not on the named vthreads: %s' % slices)
    x = [e for e in evs if e['ph'] == 'X']
    check(x[0]['tid'] == REAL_MAX, 'koids: a real id %d is kept' % REAL_MAX)
    check(x[1]['pid'] == x[2]['pid'] == irq['pid'] and x[1]['tid'] != x[2]['tid']
          and len({x[1]['tid'], x[2]['tid'], q1['tid'], q2['tid'], irq['pid']}) == 5,
          'koids: irq threads %s' % x[1:3])
    check(x[3]['pid'] == MERGED and x[3]['tid'] == MERGED + 3,
          'koids: a merged koid (below 2^32) is kept: %s' % x[3])
    synthetic = {q1['tid'], q2['tid'], irq['pid'], x[1]['tid'], x[2]['tid']}
    check(all(2 ** 31 - 2 ** 22 <= v < 2 ** 31 for v in synthetic),
          'koids: synthetic ids %s must be apart from real and merged ids' % synthetic)
    log = [e for e in evs if e.get('cat') == 'log'][0]
    check(log['tid'] == q1['tid'], 'koids: the log record on a vthread: %s' % log)
    # Catapult keys threads by the numbers as doubles: each B pairs with its own E
    stacks = {}
    for e in slices:
        key = (float(e['pid']), float(e['tid']))
        if e['ph'] == 'B':
            stacks.setdefault(key, []).append(e['ts'])
        else:
            check(stacks.get(key) and stacks[key].pop() <= e['ts'],
                  'koids: Catapult pairs an E before its B on %s' % (key,))
    sys_text = doc.get('systemTraceEvents', '')
    check(' next_pid=%d ' % x[1]['tid'] in sys_text and '(%d)' % irq['pid'] not in sys_text,
          'koids: the systrace line must name the irq thread by its id %d: %r'
          % (x[1]['tid'], sys_text))


def perfetto_order(evs):
    """Perfetto's JSON sorter (an X in the trace: its slow mode): by ts, then an E first, an X by
    decreasing duration, the rest, then file order."""
    def ns(v):
        return round(float(v) * 1000)

    def key(ie):
        i, e = ie
        ph = e['ph']
        k = -2 ** 63 if ph == 'E' else (2 ** 63 - 1 - ns(e['dur'])) if ph == 'X' else 2 ** 63 - 1
        return (ns(e['ts']), k, i)
    return [e for _, e in sorted(((i, e) for i, e in enumerate(evs) if 'ts' in e), key=key)]


def test_instaflow():
    """TRACE_INSTAFLOW_* writes begin, flow, end at one timestamp; a begin and end at one timestamp
    on a thread with only flows between become one X of duration 0 followed by the flows, which
    both importers bind to it. Other begin/end pairs stay as they are."""
    w = Writer()
    w.provider_info(1, b'flows').init(10 ** 9)
    w.string(1, b'io').string(2, b'send').string(3, b'recv').string(4, b'other')
    w.thread(1, 100, 101).thread(2, 200, 201).thread(3, 100, 102)
    w.kobj(1, 100, b'sender')
    # TRACE_INSTAFLOW_BEGIN / _STEP / _END: begin, one flow, end at one timestamp
    w.event(fxt.EV_DUR_BEGIN, 1000, 1, 1, 2, [(b'n', fxt.ARG_INT32, 1)])
    w.event(fxt.EV_FLOW_BEGIN, 1000, 1, 1, 2, payload=7)
    w.event(fxt.EV_DUR_END, 1000, 1, 1, 2)
    w.event(fxt.EV_DUR_BEGIN, 2000, 2, 1, 3)
    w.event(fxt.EV_FLOW_STEP, 2000, 2, 1, 3, payload=7)
    w.event(fxt.EV_DUR_END, 2000, 2, 1, 3, [(b'bytes', fxt.ARG_UINT32, 9)])
    w.event(fxt.EV_DUR_BEGIN, 3000, 3, 1, 3)
    w.event(fxt.EV_FLOW_END, 3000, 3, 1, 3, payload=7)
    w.event(fxt.EV_DUR_END, 3000, 3, 1, 3)
    # a begin and end at one timestamp without a flow
    w.event(fxt.EV_DUR_BEGIN, 4000, 1, 1, 4)
    w.event(fxt.EV_DUR_END, 4000, 1, 1, 4)
    # these stay B ... E: a later end, another thread's event between, an instant between
    w.event(fxt.EV_DUR_BEGIN, 5000, 1, 1, 4)
    w.event(fxt.EV_DUR_END, 5001, 1, 1, 4)
    w.event(fxt.EV_DUR_BEGIN, 6000, 1, 1, 4)
    w.event(fxt.EV_INSTANT, 6000, 2, 1, 4, scope=0)
    w.event(fxt.EV_DUR_END, 6000, 1, 1, 4)
    w.event(fxt.EV_DUR_BEGIN, 7000, 1, 1, 4)
    w.event(fxt.EV_INSTANT, 7000, 1, 1, 4, scope=0)
    w.event(fxt.EV_DUR_END, 7000, 1, 1, 4)
    w.event(fxt.EV_DUR_BEGIN, 8000, 1, 1, 2)            # held at the end of the archive
    evs, text, err, doc = convert(w.bytes(), 'instaflow')
    evs = [e for e in evs if e['ph'] != 'M']
    got = [(e['ph'], e['tid'], e['ts']) for e in evs]
    want = [('X', 101, 1.0), ('s', 101, 1.0), ('X', 201, 2.0), ('t', 201, 2.0),
            ('X', 102, 3.0), ('f', 102, 3.0), ('X', 101, 4.0),
            ('B', 101, 5.0), ('E', 101, 5.001), ('B', 101, 6.0), ('i', 201, 6.0),
            ('E', 101, 6.0), ('B', 101, 7.0), ('i', 101, 7.0), ('E', 101, 7.0), ('B', 101, 8.0)]
    check(got == want, 'instaflow: events\n    %s\n  expected\n    %s' % (got, want))
    xs = [e for e in evs if e['ph'] == 'X']
    check(all(e['dur'] == 0 for e in xs), 'instaflow: X events need dur 0: %s' % xs)
    check(xs and xs[0].get('args') == {'n': 1} and xs[1].get('args') == {'bytes': 9},
          'instaflow: the X keeps the arguments of begin and end: %s' % xs[:2])
    check(re.search(r'"ph":"X","ts":1\.000,"pid":100,"tid":101,"dur":0\.000,', text),
          'instaflow: the X\'s keys in the documented order')
    # Perfetto binds a flow to the slice on top of its thread's stack when it is processed:
    # in its sort order the X comes just before its flows
    order = perfetto_order(evs)
    for i, e in enumerate(order):
        if e['ph'] in 'stf':
            prev = [p for p in order[:i] if p['tid'] == e['tid'] and p['ph'] not in 'stf']
            check(prev and prev[-1]['ph'] == 'X' and prev[-1]['ts'] == e['ts']
                  and prev[-1]['name'] == e['name'],
                  'instaflow: Perfetto binds the flow %s to %s' % (e, prev[-1:]))
    # Perfetto's B/E pairing in its sort order: every E closes an open B of its name (before 5 us:
    # the pairs after it are left B ... E by design, docs/convert-json.md)
    stacks = {}
    for e in [e for e in order if e['ts'] < 5]:
        st = stacks.setdefault(e['tid'], [])
        if e['ph'] == 'B':
            st.append(e['name'])
        elif e['ph'] == 'E':
            check(e['name'] in st, 'instaflow: Perfetto ignores the E %s (no open B)' % e)
            if e['name'] in st:
                st.reverse()
                st.remove(e['name'])
                st.reverse()


def test_async_ids():
    """FXT matches async events by (process, category, name, id): the JSON id is process-local
    ("id2":{"local":…}, which both importers scope by pid); flow ids stay global ("id")."""
    w = Writer()
    w.provider_info(1, b'async').init(10 ** 9)
    w.string(1, b'net').string(2, b'req')
    w.thread(1, 100, 101).thread(2, 200, 201)
    w.event(fxt.EV_ASYNC_BEGIN, 1000, 1, 1, 2, payload=5)      # id 5 in two processes
    w.event(fxt.EV_ASYNC_BEGIN, 1100, 2, 1, 2, payload=5)
    w.event(fxt.EV_ASYNC_INSTANT, 1200, 1, 1, 2, payload=5)
    w.event(fxt.EV_ASYNC_END, 1300, 2, 1, 2, payload=5)
    w.event(fxt.EV_ASYNC_END, 1400, 1, 1, 2, payload=5)
    w.event(fxt.EV_FLOW_BEGIN, 1500, 1, 1, 2, payload=9)
    w.event(fxt.EV_FLOW_END, 1600, 2, 1, 2, payload=9)
    evs, text, err, doc = convert(w.bytes(), 'async')
    asy = [e for e in evs if e['ph'] in 'bne']
    check(len(asy) == 5 and all('id' not in e and e.get('id2') == {'local': '0x5'} for e in asy),
          'async: ids must be id2.local: %s' % asy)
    # both importers key a local id by (pid, cat, id): two distinct async slices
    keys = {(e['pid'], e['cat'], e['id2']['local']) for e in asy}
    check(len(keys) == 2, 'async: the two processes\' id 5 must not share a key: %s' % keys)
    flows = [e for e in evs if e['ph'] in 'sf']
    check(len(flows) == 2 and all(e.get('id') == '0x9' and 'id2' not in e for e in flows),
          'async: flow ids stay global: %s' % flows)


def test_counters():
    """Perfetto rejects a counter without arguments, and reads a string value ("NaN") as an
    error: a counter keeps its finite numeric values only, and one without any is left out; both
    are counted in the closing note."""
    w = Writer()
    w.provider_info(1, b'counters').init(10 ** 9)
    w.string(1, b'mem').string(2, b'usage')
    w.thread(1, 100, 101)
    w.event(fxt.EV_COUNTER, 1000, 1, 1, 2, [(b'label', fxt.ARG_STRING, b'x')], payload=0)
    w.event(fxt.EV_COUNTER, 2000, 1, 1, 2, [(b'nan', fxt.ARG_DOUBLE, float('nan')),
                                            (b'inf', fxt.ARG_DOUBLE, float('-inf'))], payload=0)
    w.event(fxt.EV_COUNTER, 3000, 1, 1, 2, [(b'rss', fxt.ARG_UINT64, 4096),
                                            (b'ratio', fxt.ARG_DOUBLE, float('inf')),
                                            (b'frac', fxt.ARG_DOUBLE, 0.5)], payload=0)
    evs, text, err, doc = convert(w.bytes(), 'counters')
    c = [e for e in evs if e['ph'] == 'C']
    check([(e['ts'], e.get('args')) for e in c] == [(3.0, {'rss': 4096, 'frac': 0.5})],
          'counters: %s' % c)
    check(all(e.get('args') and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                    and math.isfinite(v) for v in e['args'].values()) for e in c),
          'counters: every counter needs finite numeric args: %s' % c)
    check('4 non-numeric or non-finite counter argument(s), 2 counter(s) without a finite '
          'numeric argument' in err, 'counters: the closing note: %s' % err)


def perfetto_number(tok):
    """A JSON number as Perfetto's JSON parser reads it (util/json_parser.h): an integer that fits
    int64 as such; otherwise the integer part and the fraction's digits are summed in wrapping
    64-bit integers, the fraction divided by 10^digits (also wrapping), then the exponent
    applied."""
    if not any(ch in tok for ch in '.eE'):
        v = int(tok)
        if -2 ** 63 <= v < 2 ** 63:
            return float(v)
    neg = tok.startswith('-')
    m = re.match(r'(\d*)(?:\.(\d*))?(?:[eE]([+-]?)(\d+))?$', tok[1:] if neg else tok)
    wrap = lambda x: x - 2 ** 64 if x >= 2 ** 63 else x   # noqa: E731
    ip = 0
    for ch in m.group(1):
        ip = (ip * 10 + int(ch)) & (2 ** 64 - 1)
    frac = 0.0
    if m.group(2):
        fi, div = 0, 1
        for ch in m.group(2):
            fi = (fi * 10 + int(ch)) & (2 ** 64 - 1)
            div = (div * 10) & (2 ** 64 - 1)
        frac = float(wrap(fi)) / float(div) if div else math.inf
    out = float(wrap(ip)) + frac
    if m.group(4):
        p = 10.0 ** int(m.group(4)) if int(m.group(4)) <= 308 else math.inf
        out = out / p if m.group(3) == '-' else out * p
    return -out if neg else out


DOUBLES = [0.00012345678901234567, 1.5e-4, 0.0009999999999999998, -0.00055, 0.001, 1e-3 * 1.5,
           0.1, 1 / 3, 123.456, 2.5e-7, 1e16, 1.2345678901234568e17, 2.0 ** 53 + 2, 1e300,
           -1.7976931348623157e308, 2.2250738585072014e-308, 5e-324, 0.0, -0.0, 42.0]


def test_doubles():
    """Doubles are the shortest of 15/16/17 significant digits that reads back exactly, in
    exponent form below 1e-3 (or when shorter): never more than 19 fraction digits, which
    Perfetto's parser sums in a wrapping int64."""
    w = Writer()
    w.provider_info(1, b'doubles').init(10 ** 9)
    w.string(1, b'num').string(2, b'values')
    w.thread(1, 100, 101)
    args = [(b'v%d' % i, fxt.ARG_DOUBLE, v) for i, v in enumerate(DOUBLES)]
    for at in range(0, len(args), 15):          # at most 15 arguments a record
        w.event(fxt.EV_INSTANT, 1000, 1, 1, 2, args[at:at + 15], scope=0)
    w.event(fxt.EV_COUNTER, 2000, 1, 1, 2, [(b'c', fxt.ARG_DOUBLE, DOUBLES[0])], payload=0)
    evs, text, err, doc = convert(w.bytes(), 'doubles')
    toks = dict(re.findall(r'"(v\d+|c)":(-?[0-9][0-9.eE+-]*)', text))
    check(len(toks) == len(DOUBLES) + 1, 'doubles: %d numbers found in %r' % (len(toks), text))
    for k, tok in sorted(toks.items()):
        v = DOUBLES[0] if k == 'c' else DOUBLES[int(k[1:])]
        mant = re.split('[eE]', tok.lstrip('-'))[0]
        digits = mant.replace('.', '').lstrip('0')
        frac = mant.split('.')[1] if '.' in mant else ''
        check(float(tok) == v and str(float(tok)) == str(v),
              'doubles: %s does not read back as %r' % (tok, v))
        check(len(digits) <= 17 and len(frac) <= 19,
              'doubles: %s has %d significant, %d fraction digits' % (tok, len(digits), len(frac)))
        if v != 0 and abs(v) < 1e-3:
            check('e' in tok, 'doubles: %s below 1e-3 must use exponent form' % tok)
        pf = perfetto_number(tok)   # a subnormal: Perfetto divides by 10^324 = inf, any form
        check(abs(v) < 2.2250738585072014e-308 or pf == v or abs(pf - v) <= abs(v) * 1e-15,
              'doubles: Perfetto reads %s as %r, not %r' % (tok, pf, v))
    check(toks['v0'] == '1.2345678901234567e-4', 'doubles: 0.00012345678901234567 is written %s'
          % toks['v0'])
    check(toks['v10'] == '1e16' and toks['v18'] == '-0' and toks['v19'] == '42',
          'doubles: the shorter form: %s %s %s' % (toks['v10'], toks['v18'], toks['v19']))


def test_metadata_category():
    """M events carry "cat":"__metadata", as Chrome writes them."""
    w = Writer()
    w.provider_info(1, b'meta').init(10 ** 9)
    w.kobj(1, 100, b'proc')
    w.kobj(2, 101, b'main', [(b'process', fxt.ARG_KOID, 100)])
    w.kobj(2, VT1, b'vthread', [(b'process', fxt.ARG_KOID, 100)])
    evs, text, err, doc = convert(w.bytes(), 'meta')
    m = [e for e in evs if e['ph'] == 'M']
    check(len(m) == 3 and all(e.get('cat') == '__metadata' for e in m),
          'metadata: M events need "cat":"__metadata": %s' % m)


def test_typed_raw_fields():
    """A typed event's fields held as raw bytes (docs/event-formats.md): a struct and an array
    of structs as lossless hex (a JSON string of the raw bytes loses every byte >= 0x80 to
    U+FFFD), float and double arrays as numbers (a non-finite one as a string), integer arrays
    as numbers, text as text; a field whose bytes do not fit its format stays a string."""
    fmt = (b'category: tp\nname: raw\nID: 1\nformat:\n'
           b'\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n'
           b'\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n'
           b'\tfield:struct pt pt;\toffset:8;\tsize:8;\tsigned:0;\n'
           b'\tfield:float fa[3];\toffset:16;\tsize:12;\tsigned:1;\n'
           b'\tfield:__data_loc double[] dd;\toffset:28;\tsize:4;\tsigned:1;\n'
           b'\tfield:struct pt pts[2];\toffset:32;\tsize:16;\tsigned:0;\n'
           b'\tfield:short sa[2];\toffset:48;\tsize:4;\tsigned:1;\n'
           b'\tfield:char comm[8];\toffset:52;\tsize:8;\tsigned:1;\n'
           b'\tfield:struct pt odd;\toffset:60;\tsize:8;\tsigned:0;\n\n'
           b'print fmt: "x"\n')
    pt = struct.pack('<ii', 3, -4)
    fa = struct.pack('<fff', 1.5, -2.0, float('inf'))
    dd = struct.pack('<dd', 0.1, 1e300)
    pts = struct.pack('<iiii', 1, 2, -1, 255)
    sa = struct.pack('<hh', -2, 7)
    w = Writer()
    w.provider_info(1, b'typed').init(10 ** 9)
    w.blob(b'trace_event_format', fmt)
    w.event(fxt.EV_INSTANT, 1000, (10, 11), b'tp', b'raw', [
        (b'pt', fxt.ARG_STRING, pt), (b'fa', fxt.ARG_STRING, fa), (b'dd', fxt.ARG_STRING, dd),
        (b'pts', fxt.ARG_STRING, pts), (b'sa', fxt.ARG_STRING, sa),
        (b'comm', fxt.ARG_STRING, b'worker'), (b'odd', fxt.ARG_STRING, b'abc')])
    evs, text, err, doc = convert(w.bytes(), 'typed_raw')
    raw = [e for e in evs if e.get('name') == 'raw']
    if not check(len(raw) == 1, 'typed raw fields: %d events' % len(raw)):
        return
    a = raw[0].get('args', {})
    check(a.get('pt') == pt.hex(), 'struct field: %r, expected %r' % (a.get('pt'), pt.hex()))
    check(a.get('fa') == [1.5, -2.0, 'Infinity'], 'float array: %r' % a.get('fa'))
    check(a.get('dd') == [0.1, 1e300], 'double array: %r' % a.get('dd'))
    check(a.get('pts') == pts.hex(), 'array of structs: %r' % a.get('pts'))
    check(a.get('sa') == [-2, 7], 'short array: %r' % a.get('sa'))
    check(a.get('comm') == 'worker', 'char array: %r' % a.get('comm'))
    check(a.get('odd') == 'abc', 'a struct field of the wrong size: %r' % a.get('odd'))


def main():
    if len(sys.argv) != 2:
        print('usage: test_convert_readers.py PATH_TO_TRACE', file=sys.stderr)
        return 2
    cli.TRACE = os.path.abspath(sys.argv[1])
    tests = [
        ('pid/tid of koids >= 2^32', test_large_koids),
        ('a begin and end at one timestamp (instaflow)', test_instaflow),
        ('async ids are process-local', test_async_ids),
        ('counters keep finite numbers only', test_counters),
        ('doubles as Perfetto reads them', test_doubles),
        ('metadata events have a category', test_metadata_category),
        ('typed events: fields held as raw bytes', test_typed_raw_fields),
    ]
    with tempfile.TemporaryDirectory(prefix='fxtrace-convert-readers-') as tmp:
        cli.TMP = tmp
        run_tests(tests)
    return status()


if __name__ == '__main__':
    sys.exit(main())
