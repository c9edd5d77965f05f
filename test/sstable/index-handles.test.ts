/**
 * Index handles (src/sstable/index-handles.ts, BlockIterator.findIndexEntry): in a block of
 * one-entry restart regions whose values are block handles, the handles decode to the numbers
 * written, and a point lookup's index seek through the windows lands on the entry the block
 * iterator's seek lands on; a block that is not of that kind (regions of more entries, a value
 * that is no handle, a varint past seven bytes) gets none and every seek goes the ordinary way.
 * Through whole tables: lookups of every key, of keys between and beyond them, and of keys equal
 * to the index's separators, answer as a model does, still once the index block's own handle bytes
 * are spoiled (so the answers came from the numbers); and a block set up again over other bytes
 * drops the handles it had.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode, type SieveError } from '../../src/errors.js';
import { bytewiseInternalComparator } from '../../src/format/internal-key-comparator.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { putVarint64 } from '../../src/format/varint.js';
import { Block } from '../../src/sstable/block.js';
import { BlockBuilder } from '../../src/sstable/block-builder.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { BlockHandle } from '../../src/sstable/footer.js';
import { buildIndexHandles, INDEX_HANDLES_AFTER_LOOKUPS } from '../../src/sstable/index-handles.js';
import { WINDOWS_AFTER_SEEKS, WINDOWS_MIN_RESTARTS } from '../../src/sstable/restart-windows.js';
import { Table } from '../../src/sstable/table.js';
import { buildTable, type Entry, hex, lookup, makeEntry, modelGet, newMemFs, sortEntries } from './table-support.js';

const cmp = bytewiseInternalComparator;
const compareKeys = (a: Uint8Array, b: Uint8Array): number => cmp.compare(a, 0, a.length, b, 0, b.length);

/**
 * User keys over a small alphabet after a common stem: windows tie, keys end inside them; a stem
 * of 130 bytes gives entries headers of two-byte varints.
 */
const userKeyArb = fc
  .tuple(fc.constantFrom('', 'k', 'key00', 'k'.repeat(130)), fc.uint8Array({ maxLength: 10, max: 3 }))
  .map(([stem, tail]) => Uint8Array.from([...Buffer.from(stem), ...tail.map((b) => (b === 3 ? 0xff : b + 0x30))]));
/** A handle's numbers, up to 2^48 (seven-byte varints), and at times bytes after the handle. */
const handleArb = fc.tuple(fc.oneof(fc.nat(5000), fc.integer({ min: 0, max: 2 ** 48 - 1 })), fc.nat(70000), fc.uint8Array({ maxLength: 3 }));

/** Overwrites every entry's value in `block` (one-entry regions) with 0xff bytes: no handle decodes. */
function spoilHandles(block: Block): void {
  for (let i = 0; i < block.numRestarts; i++) {
    let p = block.restartPoint(i) + 1; // past the shared length, 0
    const lengths: number[] = [];
    for (let field = 0; field < 2; field++) {
      let value = 0;
      for (let shift = 0; ; shift += 7) {
        const byte = block.data[p++]!;
        value += (byte & 0x7f) * 2 ** shift;
        if (byte < 0x80) break;
      }
      lengths.push(value);
    }
    block.data.fill(0xff, p + lengths[0]!, p + lengths[0]! + lengths[1]!);
  }
}

function handleValue(offset: number, size: number, extra: Uint8Array): Uint8Array {
  const h = new BlockHandle(offset, size).encode();
  return Uint8Array.from([...h, ...extra]);
}

describe('index handles', () => {
  it('decode to the handles written, and the lookup seek lands where the block iterator’s does', () => {
    const blockArb = fc.uniqueArray(fc.tuple(userKeyArb, fc.integer({ min: 0, max: 9 }), handleArb), {
      minLength: WINDOWS_MIN_RESTARTS,
      maxLength: 100,
      selector: ([u, s]) => `${hex(u)}/${s}`,
    });
    const targetArb = fc.tuple(userKeyArb, fc.integer({ min: 0, max: 10 }));
    fc.assert(
      fc.property(blockArb, fc.array(targetArb, { minLength: 1, maxLength: 40 }), fc.constantFrom(1, 1, 2), (raw, targets, interval) => {
        const rows = raw.map(([u, s, h]) => ({ key: encodeInternalKey(u, s, ValueType.VALUE), handle: h })).sort((a, b) => compareKeys(a.key, b.key));
        const builder = new BlockBuilder(interval);
        for (const r of rows) builder.add(r.key, handleValue(...r.handle));
        const block = new Block(builder.finish().slice());
        const handles = buildIndexHandles(block);
        if (interval > 1) {
          expect(handles).toBeNull(); // regions of two entries
        } else {
          expect(handles).not.toBeNull();
          rows.forEach((r, i) => expect([handles![2 * i], handles![2 * i + 1]]).toEqual([r.handle[0], r.handle[1]]));
        }
        const it = block.newIterator(cmp);
        const before = encodeInternalKey(targets[0]![0], targets[0]![1], ValueType.VALUE);
        expect(it.findIndexEntry(before)).toBe(-1); // no windows yet: the ordinary seek builds them
        for (let i = 0; i < WINDOWS_AFTER_SEEKS; i++) it.seek(before);
        // Then the handles wait for INDEX_HANDLES_AFTER_LOOKUPS lookups, answering -1 meanwhile.
        for (let i = 1; i < INDEX_HANDLES_AFTER_LOOKUPS; i++) expect(it.findIndexEntry(before)).toBe(-1);
        expect(block.indexHandles).toBeUndefined();
        it.findIndexEntry(before);
        if (block.windows === null) expect(block.indexHandles).toBeUndefined(); // too few restart points
        else expect(block.indexHandles === null).toBe(interval > 1);
        // Targets at the keys themselves too: a lookup key equal to a separator.
        const all = [...targets.map(([u, s]) => encodeInternalKey(u, s, ValueType.VALUE)), ...rows.map((r) => r.key)];
        for (const target of all) {
          const expected = rows.findIndex((r) => compareKeys(r.key, target) >= 0);
          const entry = it.findIndexEntry(target);
          if (interval > 1) expect(entry).toBe(-1);
          if (entry === -1) continue; // a target without the windows' prefix
          expect(entry).toBe(expected < 0 ? block.numRestarts : expected);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a block whose values are not all handles, or whose handles need varints past seven bytes, has none', () => {
    const keys = Array.from({ length: WINDOWS_MIN_RESTARTS }, (_, i) => encodeInternalKey(Uint8Array.of(0x6b, 0x30 + i), 1, ValueType.VALUE));
    const build = (valueOf: (i: number) => Uint8Array): Block => {
      const builder = new BlockBuilder(1);
      keys.forEach((k, i) => builder.add(k, valueOf(i)));
      return new Block(builder.finish().slice());
    };
    const handle = (i: number): Uint8Array => new BlockHandle(i * 4096, 4000).encode();
    expect(buildIndexHandles(build(handle))).not.toBeNull();
    // One varint where a handle holds two.
    expect(buildIndexHandles(build((i) => (i === 7 ? Uint8Array.of(5) : handle(i))))).toBeNull();
    // An offset of 2^49: an eight-byte varint.
    const far = new Uint8Array(20);
    const farLength = putVarint64(far, putVarint64(far, 0, 2 ** 49), 10);
    expect(buildIndexHandles(build((i) => (i === 3 ? far.subarray(0, farLength) : handle(i))))).toBeNull();
    // A varint that runs off the value's end.
    expect(buildIndexHandles(build((i) => (i === 9 ? Uint8Array.of(0x80, 0x80) : handle(i))))).toBeNull();
    // Empty values.
    expect(buildIndexHandles(build(() => new Uint8Array(0)))).toBeNull();
    // The last restart point dropped: the last region holds two entries.
    const whole = build(handle).data;
    const restartOffset = whole.length - 4 - 4 * WINDOWS_MIN_RESTARTS;
    const shorter = new Uint8Array(whole.length - 4);
    shorter.set(whole.subarray(0, restartOffset + 4 * (WINDOWS_MIN_RESTARTS - 1)));
    new DataView(shorter.buffer).setUint32(shorter.length - 4, WINDOWS_MIN_RESTARTS - 1, true);
    expect(buildIndexHandles(new Block(shorter))).toBeNull();
    // A restart array that does not point at each entry in turn (the windows would read one key
    // and the handles name another entry): restart point 5 one byte into its entry.
    const bytes = build(handle).data.slice();
    const at = bytes.length - 4 - 4 * WINDOWS_MIN_RESTARTS + 4 * 5;
    new DataView(bytes.buffer).setUint32(at, new DataView(bytes.buffer).getUint32(at, true) + 1, true);
    expect(buildIndexHandles(new Block(bytes))).toBeNull();
  });
});

describe('a block set up again over other bytes', () => {
  it('drops the handles of the bytes it held before', () => {
    const blockOf = (first: number): Uint8Array => {
      const builder = new BlockBuilder(1);
      for (let i = 0; i < WINDOWS_MIN_RESTARTS; i++) {
        builder.add(encodeInternalKey(Uint8Array.of(0x6b, 0x30 + i), 1, ValueType.VALUE), new BlockHandle(first + i, 7).encode());
      }
      return builder.finish().slice();
    };
    const a = blockOf(100);
    const b = blockOf(5000);
    const bytes = new Uint8Array(Math.max(a.length, b.length));
    bytes.set(a);
    const block = Block.reuse(null, bytes, a.length, 'f', 0);
    const it = block.newIterator(cmp);
    const target = encodeInternalKey(Uint8Array.of(0x6b, 0x33), 1, ValueType.VALUE);
    for (let i = 0; i < WINDOWS_AFTER_SEEKS; i++) it.seek(target);
    for (let i = 1; i < INDEX_HANDLES_AFTER_LOOKUPS; i++) it.findIndexEntry(target);
    expect(it.findIndexEntry(target)).toBe(3);
    expect(block.indexHandles![6]).toBe(103);
    bytes.set(b);
    expect(Block.reuse(block, bytes, b.length, 'f', 0)).toBe(block);
    expect(block.indexHandles).toBeUndefined();
    expect(block.indexLookups).toBe(0);
    expect(block.windows).toBeNull();
  });
});

describe('tables with index handles', () => {
  it('answer every lookup as the model does, with the handles in use', () => {
    const entriesArb = fc.uniqueArray(fc.tuple(userKeyArb, fc.uint8Array({ minLength: 0, maxLength: 120 }), fc.boolean()), {
      minLength: 200,
      maxLength: 600,
      selector: ([u]) => hex(u),
    });
    fc.assert(
      fc.property(entriesArb, fc.array(userKeyArb, { maxLength: 60 }), fc.constantFrom(CompressionType.NONE, CompressionType.LZ4), (raw, extra, compression) => {
        const entries: Entry[] = sortEntries(raw.map(([u, v, del], i) => makeEntry(u, i + 1, del ? ValueType.DELETION : ValueType.VALUE, v)));
        const fs = newMemFs();
        buildTable(fs, '/db/t.ldb', entries, { blockSize: 256, compression });
        const table = Table.open(fs, '/db/t.ldb');
        try {
          const asked = [...entries.map((e) => e.userKey), ...extra, Uint8Array.of(), Uint8Array.of(0xff, 0xff)];
          const expectedOf = (userKey: Uint8Array): string => {
            const e = modelGet(entries, userKey, Number.MAX_SAFE_INTEGER);
            return e === undefined ? 'absent' : e.type === ValueType.DELETION ? 'deleted' : `found ${hex(e.value)}`;
          };
          // The first pass builds the index block's windows and handles (INDEX_HANDLES_AFTER_LOOKUPS
          // lookups reach the index: fewer than the keys asked).
          for (const userKey of asked) expect(lookup(table, userKey)).toBe(expectedOf(userKey));
          const index = table.indexBlock;
          if (index.numRestarts < WINDOWS_MIN_RESTARTS) return;
          expect(index.indexHandles).toBeInstanceOf(Float64Array);
          // Then every handle in the block's bytes is made unreadable (a varint that never ends):
          // a lookup that still answers took its handle from the numbers. Those whose key lacks
          // the windows' prefix go the ordinary way, and meet the damage.
          spoilHandles(index);
          let answered = 0;
          for (const userKey of asked) {
            let answer: string;
            try {
              answer = lookup(table, userKey);
            } catch (err) {
              expect((err as SieveError).code).toBe(ErrorCode.CORRUPTION);
              expect(index.newIterator(cmp).findIndexEntry(encodeInternalKey(userKey, Number.MAX_SAFE_INTEGER, ValueType.VALUE))).toBe(-1);
              continue;
            }
            expect(answer).toBe(expectedOf(userKey));
            answered++;
          }
          expect(answered).toBeGreaterThan(asked.length / 2);
        } finally {
          table.close();
        }
      }),
      { numRuns: 40 },
    );
  });
});
