#!/usr/bin/env python3
"""The archive of test_string_args (string arguments on the inline record path) through the
independent decoder, tests/tools/fxt_decode.py, written from FXT.md alone:

  - the archive conforms: no violation (inline string lengths within 32000, zero padding,
    argument and record sizes, reserved bits), no warning about an inline ref of length 0;
  - the values the C test checked through libtrace-reader decode the same here: each "len"
    and "chars" event holds the first min(n, 32000) bytes of the pattern ('a' + i % 26) for
    its n, and "special", "fifteen" and "twice" hold what was emitted.

Usage: test_string_args_decode.py TEST_STRING_ARGS_BINARY ARCHIVE_PATH
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tools'))
import fxt_decode as fxt  # noqa: E402

LIMIT = 32000
LENGTHS = [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 63, 64, 100, 1000, 4088,
           31999, 32000, 32001, 40000]
REPEAT = 3


def pattern(n):
    n = min(n, LIMIT)
    return bytes(ord('a') + i % 26 for i in range(n))


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def args_of(rec):
    return {a['name'].decode(): a for a in rec['args']}


def main():
    binary, archive = sys.argv[1], sys.argv[2]
    subprocess.run([binary, archive], check=True, stdout=subprocess.DEVNULL)
    trace = fxt.decode_file(archive)
    if trace.errors:
        fail('the archive does not conform:\n  ' + '\n  '.join(trace.errors[:20]))
    zero_length = [w for w in trace.warnings if 'length 0' in w]
    if zero_length:
        fail('inline string refs of length 0: %s' % zero_length[:5])
    events = [r for r in trace.records if r['kind'] == 'event' and r['ok']]
    by_name = {}
    for e in events:
        by_name.setdefault(e['name'].decode(), []).append(e)

    # every length, REPEAT times, in order: TA_STRING then TA_CHAR_ARRAY
    for name, arg in (('len', 's'), ('chars', 'ca')):
        got = by_name.get(name, [])
        if len(got) != REPEAT * len(LENGTHS):
            fail('%d "%s" events, expected %d' % (len(got), name, REPEAT * len(LENGTHS)))
        for i, e in enumerate(got):
            n = LENGTHS[i % len(LENGTHS)]
            a = args_of(e)[arg]
            if a['type'] != fxt.ARG_STRING or a['value'] != pattern(n):
                fail('"%s" event %d (n=%d): argument %s is %d bytes of type %d, expected %d'
                     % (name, i, n, arg, len(a['value'] or b''), a['type'], min(n, LIMIT)))
            if name == 'len' and args_of(e)['n']['value'] != n:
                fail('"len" event %d: n is %r, expected %d' % (i, args_of(e)['n']['value'], n))

    special = by_name.get('special', [])
    if len(special) != REPEAT:
        fail('%d "special" events, expected %d' % (len(special), REPEAT))
    expected = {'empty': b'', 'null': b'', 'null_inferred': b'', 'lit': b'a-literal-value',
                'lit_inferred': b'inferred-literal', 'lit_empty': b'', 'dyn': pattern(20),
                'dyn_inferred': pattern(20), 'chars0': b'', 'chars5': pattern(5),
                'chars8': pattern(8)}
    for e in special:
        got = {k: v['value'] for k, v in args_of(e).items()}
        if got != expected:
            fail('"special": %r, expected %r' % (got, expected))

    fifteen = by_name.get('fifteen', [])
    if len(fifteen) != REPEAT or any(len(e['args']) != 15 for e in fifteen):
        fail('"fifteen": %d events, argument counts %s'
             % (len(fifteen), [len(e['args']) for e in fifteen]))
    lengths = {'s0': 1, 's1': 8, 's2': 16, 's3': 17, 's4': 33, 's5': 0, 's6': 7, 's7': 300}
    for e in fifteen:
        a = args_of(e)
        for k, n in lengths.items():
            if a[k]['value'] != pattern(n):
                fail('"fifteen" %s: %r' % (k, a[k]['value']))
        for k, v in (('l0', b'L0'), ('l1', b'L-1'), ('l2', b'L--2'), ('l3', b'L---3'),
                     ('l4', b'L----4'), ('l5', b'L-----5'), ('e', b'')):
            if a[k]['value'] != v:
                fail('"fifteen" %s: %r, expected %r' % (k, a[k]['value'], v))

    twice = by_name.get('twice', [])
    if len(twice) != 2 * len(LENGTHS):
        fail('%d "twice" events, expected %d' % (len(twice), 2 * len(LENGTHS)))
    for i, e in enumerate(twice):
        n = LENGTHS[i // 2]
        if args_of(e)['s']['value'] != pattern(n) or args_of(e)['lit']['value'] != b'twice':
            fail('"twice" event %d (n=%d) holds the wrong strings' % (i, n))

    kinds = {(e['name'], e['event_type']) for e in events}
    for want in ((b'counter', fxt.EV_COUNTER), (b'begin_end', fxt.EV_DUR_BEGIN),
                 (b'begin_end', fxt.EV_DUR_END), (b'async', fxt.EV_ASYNC_BEGIN),
                 (b'async', fxt.EV_ASYNC_INSTANT), (b'async', fxt.EV_ASYNC_END),
                 (b'flow', fxt.EV_FLOW_BEGIN), (b'flow', fxt.EV_FLOW_STEP),
                 (b'flow', fxt.EV_FLOW_END), (b'scope', fxt.EV_DUR_COMPLETE),
                 (b'scope_empty', fxt.EV_DUR_COMPLETE)):
        if want not in kinds:
            fail('no %s event of type %d' % want)
    if b'too_big' in {e['name'] for e in events}:
        fail('a record over the size limit was written')
    print('ok: %d records conform, %d events checked' % (len(trace.records), len(events)))


if __name__ == '__main__':
    main()
