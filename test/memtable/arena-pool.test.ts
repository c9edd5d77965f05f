import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { getFixed32 } from '../../src/format/coding.js';
import { ArenaPool, zeroShared } from '../../src/memtable/arena-pool.js';
import { Lookup, MemTable, ValueType } from '../../src/memtable/memtable.js';
import { MemTableInternalIterator } from '../../src/iterator/memtable-iterator.js';

const ARENA = 4096;

/** Every (key, seq, type, value) of `mem`, in its order, as plain arrays. */
function contents(mem: MemTable): [number[], number, number, number[]][] {
  const out: [number[], number, number, number[]][] = [];
  const it = mem.iterator();
  for (it.seekToFirst(); it.valid; it.next()) out.push([[...it.key], it.seq, it.type, [...it.value]]);
  return out;
}

function fill(mem: MemTable, ops: [Uint8Array, boolean, Uint8Array][], firstSeq = 1): void {
  ops.forEach(([key, isPut, value], i) => mem.add(firstSeq + i, isPut ? ValueType.VALUE : ValueType.DELETION, key, value));
}

const opsArb = fc.array(fc.tuple(fc.uint8Array({ maxLength: 12, max: 5 }), fc.boolean(), fc.uint8Array({ maxLength: 20 })), { maxLength: 60 });

describe('ArenaPool', () => {
  it('hands out new shared buffers when empty, keeps only shared ones of its size and at most its capacity', () => {
    const pool = new ArenaPool(ARENA, 2);
    const a = pool.takeZeroed();
    expect(a).toBeInstanceOf(SharedArrayBuffer);
    expect(a.byteLength).toBe(ARENA);
    pool.give(new SharedArrayBuffer(ARENA * 2)); // another size: not kept
    pool.give(new ArrayBuffer(ARENA)); // a plain buffer (a memtable that outgrew its arena): not kept
    pool.give(new ArrayBuffer(0)); // a detached buffer looks like this: not kept
    expect(pool.size).toBe(0);
    pool.give(a);
    pool.give(new SharedArrayBuffer(ARENA));
    pool.give(new SharedArrayBuffer(ARENA)); // over capacity: dropped
    expect(pool.size).toBe(2);
    expect(pool.takeZeroed()).not.toBe(pool.takeZeroed());
    expect(pool.size).toBe(0);
  });

  it('zeroShared clears exactly [start, end) of a shared buffer, at any alignment', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 200 }), (start, end) => {
        const buffer = new SharedArrayBuffer(200);
        const bytes = new Uint8Array(buffer).fill(0xff);
        zeroShared(buffer, start, end);
        for (let i = 0; i < 200; i++) expect(bytes[i]).toBe(i >= start && i < end ? 0 : 0xff);
      }),
      { numRuns: 200 },
    );
  });

  it('takeZeroedFrom clears only the bytes from its start up to what was dirty; takeZeroed all of them', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: ARENA }), fc.integer({ min: 0, max: ARENA }), (dirty, start) => {
        const pool = new ArenaPool(ARENA, 1);
        const buffer = new SharedArrayBuffer(ARENA);
        const bytes = new Uint8Array(buffer);
        bytes.fill(0xab, 0, dirty);
        pool.give(buffer, dirty);
        expect(pool.takeZeroedFrom(start)).toBe(buffer);
        for (let i = 0; i < ARENA; i++) expect(bytes[i]).toBe(i < Math.min(start, dirty) ? 0xab : 0);
        bytes.fill(0xcd, 0, dirty);
        pool.give(buffer, dirty);
        expect(pool.takeZeroed()).toBe(buffer);
        expect(bytes.every((b) => b === 0)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it("a closed pool's arenas, and those given back after, go to the next pool of their size, two at most", () => {
    const SIZE = 8192; // no other test's size: the spares are the process's
    const first = new ArenaPool(SIZE, 1);
    const [a, b, c] = [first.takeZeroed(), first.takeZeroed(), first.takeZeroed()];
    new Uint8Array(a).fill(0x5a, 0, 100);
    first.give(a, 100);
    first.give(b, 0); // over the capacity of 1: kept for the next database, not dropped
    first.close(); // a joins b
    first.give(c, 0); // two spares of this size already: dropped
    const next = new ArenaPool(SIZE);
    const taken = [next.takeZeroed(), next.takeZeroed()];
    expect(new Set(taken)).toEqual(new Set([a, b]));
    for (const t of taken) expect(new Uint8Array(t).every((x) => x === 0)).toBe(true);
    expect([a, b, c]).not.toContain(next.takeZeroed()); // the spares are used up
    expect(new ArenaPool(SIZE * 2).takeZeroed().byteLength).toBe(SIZE * 2); // another size: a new one

    const late = new ArenaPool(SIZE * 3);
    const pinned = late.takeZeroed();
    late.close();
    late.give(pinned, 0); // a pinned memtable's arena, given back after the close
    expect(new ArenaPool(SIZE * 3).takeZeroed()).toBe(pinned);
  });

  it('zeroes the bytes a recycled buffer says may be dirty', () => {
    const pool = new ArenaPool(ARENA);
    const b = pool.takeZeroed();
    new Uint8Array(b).fill(0xab, 0, 1000);
    pool.give(b, 1000);
    const again = pool.takeZeroed();
    expect(again).toBe(b);
    expect(new Uint8Array(again).every((x) => x === 0)).toBe(true);
  });

  it('a memtable in a recycled arena holds exactly what one in a new buffer does (property)', () => {
    fc.assert(
      fc.property(opsArb, opsArb, fc.array(fc.uint8Array({ maxLength: 12, max: 5 }), { maxLength: 20 }), (first, second, probes) => {
        const pool = new ArenaPool(ARENA);
        const old = new MemTable({ pool });
        fill(old, first);
        old.retire();
        expect(pool.size).toBe(1);
        const reused = new MemTable({ pool });
        expect(pool.size).toBe(0);
        const fresh = new MemTable({ initialArenaBytes: ARENA });
        fill(reused, second, 1000);
        fill(fresh, second, 1000);
        expect(contents(reused)).toEqual(contents(fresh));
        for (const key of [...probes, ...second.map(([k]) => k)]) {
          const r = reused.get(key, 5000);
          expect(r).toBe(fresh.get(key, 5000));
          if (r === Lookup.FOUND) expect([...reused.foundValue]).toEqual([...fresh.foundValue]);
        }
      }),
    );
  });

  it('a retired memtable an iterator still reads keeps its arena until the iterator closes', () => {
    const pool = new ArenaPool(ARENA);
    const mem = new MemTable({ pool });
    const ops: [Uint8Array, boolean, Uint8Array][] = Array.from({ length: 20 }, (_, i) => [Buffer.from(`k${String(i).padStart(3, '0')}`), true, Buffer.from(`value ${i}`)]);
    fill(mem, ops);
    const expected = contents(mem);
    const it = new MemTableInternalIterator(mem);
    mem.retire();
    expect(pool.size).toBe(0); // pinned: not recycled
    // New memtables cannot take the pinned arena: writing them leaves the old one's bytes alone.
    const next = new MemTable({ pool });
    fill(next, ops.map(([k]) => [k, true, Buffer.alloc(9, 0xee)]), 100);
    const seen: [number[], number, number, number[]][] = [];
    for (it.seekToFirst(); it.valid(); it.next()) {
      const key = it.key();
      const n = key.length;
      const lo = getFixed32(key, n - 8);
      const seq = getFixed32(key, n - 4) * 2 ** 24 + (lo >>> 8);
      seen.push([[...key.subarray(0, n - 8)], seq, lo & 0xff, [...it.value()]]);
    }
    expect(seen).toEqual(expected);
    it.close();
    expect(pool.size).toBe(1); // the last reader gone: recycled
    it.close(); // a second close unpins nothing more
    expect(pool.size).toBe(1);
    // The retired memtable reads as empty now, not as whatever its old arena holds next.
    expect(contents(mem)).toEqual([]);
    expect(mem.get(Buffer.from('k001'), 1000)).toBe(Lookup.NOT_FOUND);
  });

  it('an iterator over a memtable that is never retired leaves it usable after close', () => {
    const pool = new ArenaPool(ARENA);
    const mem = new MemTable({ pool });
    mem.add(1, ValueType.VALUE, Buffer.from('a'), Buffer.from('1'));
    new MemTableInternalIterator(mem).close();
    expect(pool.size).toBe(0);
    expect(mem.get(Buffer.from('a'), 1)).toBe(Lookup.FOUND);
  });
});
