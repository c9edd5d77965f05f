import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareBytes } from '../../src/format/bytes.js';
import { levelDBHash } from '../../src/filter/leveldb-hash.js';
import { Lookup, MEMTABLE_BLOOM_SEED, MemTable, ValueType } from '../../src/memtable/memtable.js';
import { FILL_SLICE } from '../../src/memtable/memtable-filter.js';
import { BatchEntries, WriteBatch } from '../../src/wal/write-batch.js';
import { EntryRun } from '../../src/memtable/entry-run.js';

interface Entry {
  key: Uint8Array;
  seq: number;
  type: number;
  value: Uint8Array;
}

/** Internal-key order: user key ascending, sequence descending. */
/** A plain Uint8Array copy, so Buffer views compare equal to expected Uint8Arrays. */
const u8 = (b: Uint8Array): Uint8Array => new Uint8Array(b);

const internalOrder = (a: Entry, b: Entry): number => compareBytes(a.key, b.key) || b.seq - a.seq;

const keyArb = fc.uint8Array({ maxLength: 6, max: 3 }); // few distinct bytes: many collisions
const opsArb = fc.array(fc.tuple(keyArb, fc.boolean(), fc.uint8Array({ maxLength: 8 })), { maxLength: 200 });

function build(ops: [Uint8Array, boolean, Uint8Array][], bloomBits = 0): { mem: MemTable; entries: Entry[] } {
  const mem = new MemTable({ bloomBits });
  const entries: Entry[] = [];
  ops.forEach(([key, isPut, value], i) => {
    const seq = i + 1;
    const type = isPut ? ValueType.VALUE : ValueType.DELETION;
    mem.add(seq, type, key, value);
    entries.push({ key: key.slice(), seq, type, value: isPut ? value.slice() : new Uint8Array(0) });
    key.fill(0xee); // the memtable must have copied the bytes
    value.fill(0xee);
  });
  return { mem, entries: entries.sort(internalOrder) };
}

function collectForward(mem: MemTable): Entry[] {
  const out: Entry[] = [];
  const it = mem.iterator();
  for (it.seekToFirst(); it.valid; it.next()) out.push({ key: u8(it.key), seq: it.seq, type: it.type, value: u8(it.value) });
  return out;
}

describe('MemTable', () => {
  it('iterates every entry in internal-key order, forward and backward', () => {
    fc.assert(
      fc.property(opsArb, (ops) => {
        const { mem, entries } = build(ops);
        expect(mem.count).toBe(entries.length);
        expect(collectForward(mem)).toEqual(entries);
        const backward: Entry[] = [];
        const it = mem.iterator();
        for (it.seekToLast(); it.valid; it.prev()) backward.push({ key: u8(it.key), seq: it.seq, type: it.type, value: u8(it.value) });
        expect(backward).toEqual([...entries].reverse());
      }),
    );
  });

  it('get returns the newest version visible at a sequence, like a model', () => {
    fc.assert(
      fc.property(opsArb, keyArb, fc.nat(220), fc.boolean(), (ops, probe, atSeq, bloom) => {
        const { mem, entries } = build(ops, bloom ? 256 : 0);
        const visible = entries.find((e) => compareBytes(e.key, probe) === 0 && e.seq <= atSeq);
        const result = mem.get(probe, atSeq);
        if (visible === undefined) expect(result).toBe(Lookup.NOT_FOUND);
        else if (visible.type === ValueType.DELETION) expect(result).toBe(Lookup.DELETED);
        else {
          expect(result).toBe(Lookup.FOUND);
          expect(u8(mem.foundValue)).toEqual(visible.value);
        }
      }),
    );
  });

  it('seek lands on the first entry at or after (key, seq)', () => {
    fc.assert(
      fc.property(opsArb, keyArb, fc.nat(220), (ops, key, seq) => {
        const { mem, entries } = build(ops);
        const target: Entry = { key, seq, type: 0, value: new Uint8Array(0) };
        const expected = entries.find((e) => internalOrder(e, target) >= 0);
        const it = mem.iterator();
        it.seek(key, seq);
        if (expected === undefined) expect(it.valid).toBe(false);
        else expect([u8(it.key), it.seq]).toEqual([expected.key, expected.seq]);
      }),
    );
  });

  it('its bloom has no false negatives and rejects most absent keys', () => {
    const mem = new MemTable({ bloomBits: 10 * 1000 });
    const key = (i: number): Uint8Array => new TextEncoder().encode(`key-${i}`);
    for (let i = 0; i < 1000; i++) mem.add(i + 1, ValueType.VALUE, key(i), key(i));
    for (let i = 0; i < 1000; i++) expect(mem.get(key(i), 1e9)).toBe(Lookup.FOUND);
    let passed = 0;
    for (let i = 1000; i < 11000; i++) if (mem.get(key(i), 1e9) !== Lookup.NOT_FOUND) passed++;
    expect(passed).toBe(0);
    let bloomPassed = 0;
    for (let i = 1000; i < 11000; i++) {
      // Count how often the bloom alone lets an absent key through (≈1% at 10 bits/key, k = 6).
      if (mem.mayContainHash(hashOf(key(i)))) bloomPassed++;
    }
    expect(bloomPassed).toBeLessThan(300);
  });

  it('counts memory as it grows and copes with large values', () => {
    const mem = new MemTable();
    expect(mem.approximateMemoryUsage).toBe(0);
    const big = new Uint8Array(300_000).fill(7);
    mem.add(1, ValueType.VALUE, new Uint8Array([1]), big);
    mem.add(2, ValueType.VALUE, new Uint8Array([2]), new Uint8Array(10));
    expect(mem.approximateMemoryUsage).toBeGreaterThan(300_011);
    expect(mem.get(new Uint8Array([1]), 5)).toBe(Lookup.FOUND);
    expect(Buffer.compare(mem.foundValue, big)).toBe(0);
  });
});

function hashOf(key: Uint8Array): number {
  return levelDBHash(key, MEMTABLE_BLOOM_SEED);
}

describe('MemTable key comparison (word-wise up to 32 bytes, memcmp beyond)', () => {
  // Keys of 0–40 bytes from two byte values, often sharing a long prefix: they differ in every
  // byte position of a word, at word boundaries, and on both sides of the 32-byte switch.
  const longKeyArb = fc.tuple(fc.integer({ min: 0, max: 36 }), fc.uint8Array({ maxLength: 6, max: 1 })).map(([shared, tail]) => {
    const key = new Uint8Array(shared + tail.length);
    key.fill(9, 0, shared);
    key.set(tail, shared);
    return key;
  });
  it('iterates and gets like a sorted model', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(longKeyArb, fc.boolean(), fc.uint8Array({ maxLength: 3 })), { maxLength: 120 }), (ops) => {
        const { mem, entries } = build(ops);
        expect(collectForward(mem)).toEqual(entries);
        for (const e of entries) {
          const newest = entries.find((x) => compareBytes(x.key, e.key) === 0)!;
          expect(mem.get(e.key, 1000)).toBe(newest.type === ValueType.DELETION ? Lookup.DELETED : Lookup.FOUND);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('MemTable ascending inserts (the tail fast path)', () => {
  it('keeps internal-key order when ascending runs, repeats and random keys interleave', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.nat(50), fc.nat(5)), { maxLength: 300 }), (plan) => {
        const mem = new MemTable();
        const entries: Entry[] = [];
        let ascending = 0;
        plan.forEach(([inOrder, random, repeat]) => {
          // Either the next key of a growing run (appended at the tail), or a random earlier key.
          const k = inOrder ? ascending++ : random;
          for (let r = 0; r <= repeat % 2; r++) {
            const key = new TextEncoder().encode(`k${String(k).padStart(4, '0')}`);
            const seq = entries.length + 1;
            mem.add(seq, ValueType.VALUE, key, key);
            entries.push({ key, seq, type: ValueType.VALUE, value: key });
          }
        });
        entries.sort(internalOrder);
        expect(collectForward(mem)).toEqual(entries.map((e) => ({ ...e, key: u8(e.key), value: u8(e.value) })));
        for (const e of entries) {
          expect(mem.get(e.key, 1e9)).toBe(Lookup.FOUND);
        }
      }),
    );
  });
});

describe('MemTable.addEntries (a batch, inserted in key order from the previous insert)', () => {
  // Batches of any length (below and above the sorting threshold), with repeated keys inside a
  // batch, deletions, ascending runs and single adds in between: the memtable must hold exactly
  // what adding every entry one by one at its sequence would, and answer gets like that model.
  const batchArb = fc.array(fc.tuple(fc.nat(40), fc.boolean(), fc.uint8Array({ maxLength: 6 })), { maxLength: 60 });
  it('holds what one-by-one adds would, in internal-key order', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(batchArb, fc.nat(40)), { maxLength: 12 }), fc.boolean(), (plan, bloom) => {
        const mem = new MemTable({ bloomBits: bloom ? 4096 : 0 });
        const entries: Entry[] = [];
        const decoded = new BatchEntries();
        let seq = 1;
        const keyOf = (n: number): Uint8Array => new TextEncoder().encode(`key${String(n).padStart(3, '0')}`);
        for (const [ops, single] of plan) {
          const batch = new WriteBatch();
          for (const [k, isPut, value] of ops) {
            if (isPut) batch.put(keyOf(k), value);
            else batch.del(keyOf(k));
          }
          const rep = batch.contents().slice();
          decoded.decode(rep);
          mem.addEntries(rep, decoded, seq);
          ops.forEach(([k, isPut, value], i) => {
            entries.push({ key: keyOf(k), seq: seq + i, type: isPut ? ValueType.VALUE : ValueType.DELETION, value: isPut ? value : new Uint8Array(0) });
          });
          seq += ops.length;
          mem.add(seq, ValueType.VALUE, keyOf(single), keyOf(single));
          entries.push({ key: keyOf(single), seq, type: ValueType.VALUE, value: keyOf(single) });
          seq++;
        }
        entries.sort(internalOrder);
        expect(collectForward(mem)).toEqual(entries.map((e) => ({ ...e, key: u8(e.key), value: u8(e.value) })));
        for (let k = 0; k <= 40; k++) {
          const newest = entries.find((e) => compareBytes(e.key, keyOf(k)) === 0);
          const got = mem.get(keyOf(k), seq);
          if (newest === undefined) expect(got).toBe(Lookup.NOT_FOUND);
          else if (newest.type === ValueType.DELETION) expect(got).toBe(Lookup.DELETED);
          else {
            expect(got).toBe(Lookup.FOUND);
            expect(u8(mem.foundValue)).toEqual(u8(newest.value));
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('MemTable.addRun (a WAL replay: many batches gathered, sorted once, loaded)', () => {
  // Keys from a small alphabet that includes 0 (the byte a key's end reads as in the sort
  // numbers) with a long shared prefix or none, so the numbers tie often and the full comparison
  // decides; lengths on both sides of the 8 bytes the numbers hold.
  const keyArb = fc.oneof(
    fc.uint8Array({ maxLength: 12, max: 2 }),
    fc.uint8Array({ minLength: 0, maxLength: 14, max: 2 }).map((tail) => new Uint8Array([7, 7, 7, 7, 7, ...tail])),
  );
  const batchArb = fc.array(fc.tuple(keyArb, fc.boolean(), fc.uint8Array({ maxLength: 6 })), { minLength: 1, maxLength: 40 });
  const planArb = fc.array(fc.tuple(batchArb, fc.nat(5)), { maxLength: 10 });
  const preArb = fc.array(fc.tuple(keyArb, fc.uint8Array({ maxLength: 4 })), { maxLength: 20 });

  it('holds what one-by-one adds would, into an empty memtable or one that has entries', () => {
    fc.assert(
      fc.property(planArb, preArb, fc.boolean(), (plan, pre, bloom) => {
        const mem = new MemTable({ bloomBits: bloom ? 4096 : 0 });
        const entries: Entry[] = [];
        let seq = 1;
        for (const [key, value] of pre) {
          mem.add(seq, ValueType.VALUE, key, value);
          entries.push({ key, seq, type: ValueType.VALUE, value });
          seq++;
        }
        const run = new EntryRun();
        const decoded = new BatchEntries();
        for (const [ops, gap] of plan) {
          seq += gap; // sequences need not follow on from one batch to the next
          const batch = new WriteBatch();
          for (const [key, isPut, value] of ops) {
            if (isPut) batch.put(key, value);
            else batch.del(key);
          }
          const rep = batch.contents().slice();
          decoded.decode(rep);
          run.addBatch(rep, decoded, seq);
          rep.fill(0xee); // the run must have copied the record
          ops.forEach(([key, isPut, value], i) => {
            entries.push({ key, seq: seq + i, type: isPut ? ValueType.VALUE : ValueType.DELETION, value: isPut ? value : new Uint8Array(0) });
          });
          seq += ops.length;
        }
        const before = mem.approximateMemoryUsage;
        mem.addRun(run);
        expect(mem.approximateMemoryUsage - before).toBeGreaterThan(0.75 * run.nodeBytes - 1);
        entries.sort(internalOrder);
        expect(mem.count).toBe(entries.length);
        expect(collectForward(mem)).toEqual(entries.map((e) => ({ ...e, key: u8(e.key), value: u8(e.value) })));
        for (const e of entries) {
          const newest = entries.find((x) => compareBytes(x.key, e.key) === 0)!;
          const got = mem.get(e.key, seq);
          if (newest.type === ValueType.DELETION) expect(got).toBe(Lookup.DELETED);
          else {
            expect(got).toBe(Lookup.FOUND);
            expect(u8(mem.foundValue)).toEqual(u8(newest.value));
          }
        }
        // Inserts after a load find their place (the load leaves no stale search path).
        const later = new Uint8Array([7, 7, 7, 7, 7, 1]);
        mem.add(seq, ValueType.VALUE, later, later);
        expect(mem.get(later, seq)).toBe(Lookup.FOUND);
        expect(collectForward(mem).length).toBe(entries.length + 1);
      }),
      { numRuns: 300 },
    );
  });

  it('a deferred Bloom filter: gets search the list until reads need the filter, then it holds every key', () => {
    const key = (i: number): Uint8Array => new TextEncoder().encode(`k${i}`);
    const mem = new MemTable({ bloomBits: 4096 });
    for (let i = 0; i < 50; i += 2) mem.add(i + 1, ValueType.VALUE, key(i), key(i));
    expect(mem.bloomDeferred).toBe(false);
    mem.deferBloom();
    expect(mem.bloomDeferred).toBe(true);
    for (let i = 50; i < 60; i += 2) mem.add(i + 1, ValueType.VALUE, key(i), key(i)); // added while deferred
    // Deferred: no filter answers, every get searches the list.
    for (let i = 0; i < 60; i++) {
      expect(mem.get(key(i), 100)).toBe(i % 2 === 0 ? Lookup.FOUND : Lookup.NOT_FOUND);
      expect(mem.mayContainHash(levelDBHash(key(i), MEMTABLE_BLOOM_SEED))).toBe(true);
    }
    expect(mem.bloomDeferred).toBe(true);
    // The 65th search begins the fill (its 30 keys, one slice of FILL_SLICE), the 66th checks
    // their links and ends it: the filter holds the keys added before and during the deferral.
    for (let i = 0; i < 5; i++) mem.get(key(1), 100);
    expect(mem.bloomDeferred).toBe(true);
    mem.get(key(1), 100);
    expect(mem.bloomDeferred).toBe(false);
    for (let i = 60; i < 70; i += 2) mem.add(i + 1, ValueType.VALUE, key(i), key(i)); // added after the fill
    let excluded = 0;
    for (let i = 0; i < 400; i++) {
      const mayContain = mem.mayContainHash(levelDBHash(key(i), MEMTABLE_BLOOM_SEED));
      if (i < 70 && i % 2 === 0) expect(mayContain).toBe(true);
      if (!mayContain) excluded++;
      expect(mem.get(key(i), 100)).toBe(i < 70 && i % 2 === 0 ? Lookup.FOUND : Lookup.NOT_FOUND);
    }
    expect(excluded).toBeGreaterThan(300); // the filter answers for absent keys again
  });

  it('a memtable over an image state with deferBloom fills its filter at the first reads, not when made', () => {
    const key = (i: number): Uint8Array => new TextEncoder().encode(`key-${String(i).padStart(5, '0')}`);
    const source = new MemTable();
    for (let i = 0; i < 4000; i += 2) source.add(i + 1, ValueType.VALUE, key(i), key(i));
    const state = { list: source.exportState(), maxSequence: 4000 };
    const eager = new MemTable({ bloomBits: 65536, state });
    const deferred = new MemTable({ bloomBits: 65536, state: { list: source.exportState(), maxSequence: 4000 }, deferBloom: true });
    expect(eager.bloomDeferred).toBe(false);
    expect(deferred.bloomDeferred).toBe(true);
    // Counted as if filled, so the memtable switches at the same size whether reads filled it or not.
    expect(deferred.approximateMemoryUsage).toBe(eager.approximateMemoryUsage);
    // A sixteenth of 2,000 entries is 125 searches (more than 64); the 126th begins the fill, a
    // slice of FILL_SLICE keys per search, then 4·FILL_SLICE links per search.
    for (let i = 0; i < 125; i++) expect(deferred.get(key(2 * i), 5000)).toBe(Lookup.FOUND);
    expect(deferred.bloomDeferred).toBe(true);
    let searches = 0;
    while (deferred.bloomDeferred) {
      expect(deferred.get(key(2 * searches + 1), 5000)).toBe(Lookup.NOT_FOUND);
      expect(deferred.get(key(2 * searches), 5000)).toBe(Lookup.FOUND);
      searches += 2;
    }
    expect(searches).toBe(Math.ceil(2000 / FILL_SLICE) + Math.ceil(2000 / (4 * FILL_SLICE)));
    for (let i = 0; i < 4000; i++) {
      const h = levelDBHash(key(i), MEMTABLE_BLOOM_SEED);
      expect(deferred.mayContainHash(h)).toBe(eager.mayContainHash(h)); // the same bits as one filled when made
      expect(deferred.get(key(i), 5000)).toBe(i % 2 === 0 ? Lookup.FOUND : Lookup.NOT_FOUND);
    }
  });

  it('a deferred filter filled a slice per search answers like the list under any mix of gets and adds', () => {
    // An image's memtable (deferBloom) taking writes while reads fill its filter: every get finds
    // exactly what the model holds, before, during and after the fill, and the filled filter holds
    // every key added before the deferral, during it, and during the fill.
    const key = (i: number): Uint8Array => new TextEncoder().encode(`key-${String(i).padStart(5, '0')}`);
    const op = fc.oneof(fc.record({ get: fc.nat(3999) }), fc.record({ add: fc.nat(3999) }));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1500 }), fc.array(op, { maxLength: 1200 }), (imaged, ops) => {
        const source = new MemTable();
        const model = new Map<number, number>();
        let seq = 0;
        for (let i = 0; i < imaged; i++) {
          const k = (i * 2654435761) % 4000;
          source.add(++seq, ValueType.VALUE, key(k), key(seq));
          model.set(k, seq);
        }
        const mem = new MemTable({ bloomBits: 1 << 15, state: { list: source.exportState(), maxSequence: seq }, deferBloom: true });
        for (const o of ops) {
          if ('add' in o) {
            mem.add(++seq, ValueType.VALUE, key(o.add), key(seq));
            model.set(o.add, seq);
          } else {
            const want = model.get(o.get);
            expect(mem.get(key(o.get), seq)).toBe(want === undefined ? Lookup.NOT_FOUND : Lookup.FOUND);
            if (want !== undefined) expect(mem.foundValue).toEqual(key(want));
          }
        }
        // Enough searches to end any fill under way: the filter then holds every key.
        for (let i = 0; i < 200 && mem.bloomDeferred; i++) mem.get(key(0), seq);
        expect(mem.bloomDeferred).toBe(false);
        for (const k of model.keys()) expect(mem.mayContainHash(levelDBHash(key(k), MEMTABLE_BLOOM_SEED))).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('orders a run too long for 16 index bits, whose keys tie in the 8 bytes after their shared prefix', () => {
    // 70,000 entries: the sort numbers take 17 index bits. Keys `p‖xxxxxxxx‖nnnnn`: 35,000
    // distinct, each written twice (the later, higher sequence first in the memtable).
    const n = 35_000;
    const key = (i: number): Uint8Array => new TextEncoder().encode(`prefix/${'x'.repeat(8)}${String((i * 7919) % n).padStart(5, '0')}`);
    const run = new EntryRun();
    const decoded = new BatchEntries();
    let seq = 1;
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < n; i += 1000) {
        const batch = new WriteBatch();
        for (let j = i; j < i + 1000; j++) batch.put(key(j), new Uint8Array([round]));
        const rep = batch.contents().slice();
        decoded.decode(rep);
        run.addBatch(rep, decoded, seq);
        seq += 1000;
      }
    }
    const mem = new MemTable();
    mem.addRun(run);
    const it = mem.iterator();
    let count = 0;
    let previous: { key: Uint8Array; seq: number } | null = null;
    for (it.seekToFirst(); it.valid; it.next()) {
      if (previous !== null) {
        const c = compareBytes(previous.key, it.key);
        expect(c < 0 || (c === 0 && previous.seq > it.seq)).toBe(true);
      }
      if (count % 2 === 0) expect(it.value[0]).toBe(1); // the newer version comes first
      previous = { key: u8(it.key), seq: it.seq };
      count++;
    }
    expect(count).toBe(2 * n);
  });
});
