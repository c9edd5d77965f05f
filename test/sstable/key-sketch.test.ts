/**
 * The table key sketch (key-sketch.ts): a table builder's sketch, made from the hash it shares with
 * the Ribbon filter, has exactly the registers of the sketch the database makes by hashing the same
 * keys (of a memtable, or of a table scanned for lack of one) — else merged estimates would count
 * keys twice — and it estimates distinct keys as HyperLogLog at precision 12 should.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { addKeyToSketch, newKeySketch } from '../../src/sstable/key-sketch.js';
import { TableBuilder } from '../../src/sstable/table-builder.js';
import { Table } from '../../src/sstable/table.js';

describe('table key sketch', () => {
  it("a table's sketch has the registers of the user keys hashed one by one", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.uint8Array({ minLength: 0, maxLength: 24 }), { maxLength: 300, comparator: (a, b) => Buffer.compare(a, b) === 0 }), fc.nat(3), (keys, versions) => {
        const sorted = [...keys].sort(Buffer.compare);
        const fs = new MemFileSystem();
        const file = fs.createWritable('/t.ldb');
        const builder = new TableBuilder(file);
        let seq = 1_000_000;
        // Some keys in several versions: a user key counts once.
        for (const k of sorted) for (let v = 0; v <= versions; v++) builder.add(encodeInternalKey(k, seq - v, ValueType.VALUE), new Uint8Array([v]));
        builder.finish();
        file.close();
        const expected = newKeySketch();
        for (const k of sorted) addKeyToSketch(expected, k, 0, k.length);
        const table = Table.open(fs, '/t.ldb');
        try {
          expect(Buffer.from(table.properties!.keySketch!.serialize()).toString('hex')).toBe(Buffer.from(expected.serialize()).toString('hex'));
        } finally {
          table.close();
        }
      }),
      { numRuns: 100 },
    );
  });

  it('estimates distinct keys within 3 standard errors (1.6% each), on sequential keys of three shapes', () => {
    for (const [n, key] of [
      [50_000, (i: number) => `user:${String(i).padStart(5, '0')}`],
      [200_000, (i: number) => String(i).padStart(16, '0')],
      [1_000, (i: number) => `k${i}`],
    ] as const) {
      const sketch = newKeySketch();
      for (let i = 0; i < n; i++) {
        const k = Buffer.from(key(i));
        addKeyToSketch(sketch, k, 0, k.length);
      }
      expect(Math.abs(sketch.count() - n) / n).toBeLessThan(3 * 0.0163);
    }
  });
});
