#!/usr/bin/env python3
"""A minimal FXT reader that frames records the way Perfetto's importer does (READERS.md).

Independent of fxtrace's reader library and of fxt_decode.py, written from the description of
Perfetto's FXT tokenizer in shared/spec/READERS.md and FXT.md:

  - every record's size is taken from bits 4..15 of its header, whatever its type (a large
    record, type 15, included: its 32-bit size is never read);
  - a size of 0 stops the import ("Unexpected record of size 0");
  - bytes at the end that do not make a whole record are left over, never parsed;
  - provider-info records start a provider with fresh string tables, provider-section records
    switch back; string records fill the current provider's table;
  - event records (type 4) are read: timestamp, thread (inline or not), category and name
    (inline or from the table), arguments skipped by their own 12-bit size, with the values of
    integer arguments kept; blob records (type 5) are skipped unless of blob type 3 (embedded
    Perfetto protobuf, which is only counted here); every other record type is skipped.

So it sees what Perfetto sees of an archive's framing: if a record's real size needs more than
12 bits, what follows it is read from the middle of its body.

Library use:
    result = fxt12_reader.read(data)
    result['events']     list of {'offset', 'name', 'category', 'ts', 'args'} in file order
    result['error']      None, or why the import stopped (with the offset)
    result['leftover']   bytes at the end not read as a record
    result['records']    records framed
    result['by_type']    records framed, by record type
CLI: fxt12_reader.py FILE  prints the result as JSON; exit 0 unless the import stopped or bytes
were left over.
"""

import json
import struct
import sys


def bits(word, lo, hi):
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


def _words(n):
    return (n + 7) // 8


class _Record:
    """A cursor over one record's words, bounded by its (12-bit) size."""

    def __init__(self, data, offset, nwords):
        self.data, self.offset, self.end, self.pos = data, offset, offset + nwords * 8, offset + 8

    def word(self):
        if self.pos + 8 > self.end:
            raise ValueError('record too short')
        w = struct.unpack_from('<Q', self.data, self.pos)[0]
        self.pos += 8
        return w

    def stream(self, length):
        n = _words(length) * 8
        if self.pos + n > self.end:
            raise ValueError('stream past the record')
        s = bytes(self.data[self.pos:self.pos + length])
        self.pos += n
        return s


def read(data):
    result = {'events': [], 'error': None, 'leftover': 0, 'records': 0, 'by_type': {},
              'invalid': 0, 'perfetto_blobs': 0}
    tables = {0: {}}        # provider id -> string table
    current = tables[0]
    pos = 0
    while pos + 8 <= len(data):
        header = struct.unpack_from('<Q', data, pos)[0]
        nwords = bits(header, 4, 15)
        if nwords == 0:
            result['error'] = 'Unexpected record of size 0 at offset %d' % pos
            return result
        if pos + nwords * 8 > len(data):
            break
        rtype = bits(header, 0, 3)
        result['records'] += 1
        result['by_type'][rtype] = result['by_type'].get(rtype, 0) + 1
        rec = _Record(data, pos, nwords)
        try:
            if rtype == 0:
                mtype = bits(header, 16, 19)
                if mtype == 1:
                    rec.stream(bits(header, 52, 59))
                    current = tables[bits(header, 20, 51)] = {}
                elif mtype == 2:
                    current = tables.setdefault(bits(header, 20, 51), {})
            elif rtype == 2:
                index = bits(header, 16, 30)
                if index:
                    current[index] = rec.stream(bits(header, 32, 46))
            elif rtype == 4:
                result['events'].append(_event(rec, header, current))
            elif rtype == 5 and bits(header, 48, 55) == 3:
                result['perfetto_blobs'] += 1
        except ValueError:
            result['invalid'] += 1
        pos += nwords * 8
    result['leftover'] = len(data) - pos
    return result


def _string(rec, ref, table):
    if ref == 0:
        return b''
    if ref & 0x8000:
        return rec.stream(ref & 0x7fff)
    return table.get(ref, b'')


def _event(rec, header, table):
    ts = rec.word()
    if bits(header, 24, 31) == 0:
        rec.word()
        rec.word()
    category = _string(rec, bits(header, 32, 47), table)
    name = _string(rec, bits(header, 48, 63), table)
    args = {}
    for _ in range(bits(header, 20, 23)):
        base = rec.pos
        ah = rec.word()
        atype, awords = bits(ah, 0, 3), bits(ah, 4, 15)
        aname = _string(rec, bits(ah, 16, 31), table)
        if atype in (1, 2):
            value = bits(ah, 32, 63)
            args[aname.decode('utf-8', 'replace')] = value - (1 << 32) if (
                atype == 1 and value >> 31) else value
        elif atype in (3, 4):
            value = rec.word()
            args[aname.decode('utf-8', 'replace')] = value - (1 << 64) if (
                atype == 3 and value >> 63) else value
        rec.pos = base + awords * 8
    return {'offset': rec.offset, 'name': name.decode('utf-8', 'replace'),
            'category': category.decode('utf-8', 'replace'), 'ts': ts, 'args': args}


def main():
    if len(sys.argv) != 2:
        sys.stderr.write('usage: fxt12_reader.py FILE\n')
        return 2
    with open(sys.argv[1], 'rb') as f:
        result = read(f.read())
    json.dump(result, sys.stdout, indent=1)
    sys.stdout.write('\n')
    return 1 if result['error'] or result['leftover'] else 0


if __name__ == '__main__':
    sys.exit(main())
