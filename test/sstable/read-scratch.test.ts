/**
 * The tables of one thread read every block through one shared scratch (table.ts readScratch):
 * reads of several tables interleaved, lookups and scans, with blocks of every size — small ones,
 * ones that grow the scratch, and ones larger than it keeps (each read then gets a buffer of its
 * own) — answer as each table's own data says.
 */
import { describe, expect, it } from 'vitest';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import { KeyProbes } from '../../src/filter/key-probes.js';
import { encodeInternalKey, MAX_SEQUENCE, ValueType } from '../../src/format/internal-key.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { GetStatus, Table, TableGetResult } from '../../src/sstable/table.js';
import { buildTable, type Entry, hex, makeEntry, newMemFs, sortEntries } from './table-support.js';

function entries(n: number, valueBytes: (i: number) => number, tag: number): Entry[] {
  const out: Entry[] = [];
  for (let i = 0; i < n; i++) {
    const key = new TextEncoder().encode(`t${tag}-${String(i).padStart(6, '0')}`);
    const value = new Uint8Array(valueBytes(i)).map((_, j) => (i * 7 + j * 13 + tag) & 0xff);
    out.push(makeEntry(key, 1 + i, ValueType.VALUE, value));
  }
  return sortEntries(out);
}

function lookup(table: Table, userKey: Uint8Array): string {
  const probes = new KeyProbes();
  probes.reset(userKey);
  const result = new TableGetResult();
  const status = table.get(encodeInternalKey(userKey, MAX_SEQUENCE, ValueType.VALUE), userKey, probes, result);
  return status === GetStatus.FOUND ? hex(result.value) : 'absent';
}

describe('one read scratch for the tables of a thread', () => {
  it('interleaved reads of tables with small, growing and oversized blocks answer right', () => {
    const fs = newMemFs();
    const sets = [
      entries(400, () => 40, 1), // 4 KiB blocks
      entries(60, (i) => 2_000 + 900 * i, 2), // blocks that grow the scratch step by step
      entries(6, (i) => 300_000 + 1000 * i, 3), // each block beyond the 256 KiB the scratch keeps (stored uncompressed)
    ];
    const tables = sets.map((es, t) => {
      buildTable(fs, `/db/${t}.ldb`, es, { compression: t === 0 ? CompressionType.LZ4 : CompressionType.NONE, filterPolicy: new BloomFilterPolicy(10), blockSize: 4096 });
      return Table.open(fs, `/db/${t}.ldb`);
    });
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 150; i++) {
        for (let t = 0; t < tables.length; t++) {
          const es = sets[t]!;
          const e = es[(i * 31 + round) % es.length]!;
          expect(lookup(tables[t]!, e.userKey)).toBe(hex(e.value));
        }
      }
      // Scans of the three at once, a step of each in turn.
      const its = tables.map((table) => table.newIterator());
      its.forEach((it) => it.seekToFirst());
      const seen = [0, 0, 0];
      while (its.some((it) => it.valid())) {
        its.forEach((it, t) => {
          if (!it.valid()) return;
          const want = sets[t]![seen[t]!++]!;
          expect(hex(it.key())).toBe(hex(want.key));
          expect(hex(it.value())).toBe(hex(want.value));
          it.next();
        });
      }
      expect(seen).toEqual(sets.map((es) => es.length));
      its.forEach((it) => it.close());
    }
    tables.forEach((table) => table.close());
  });
});
