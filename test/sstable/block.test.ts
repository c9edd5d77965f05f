import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { bytewiseComparator, compareWhole, type Comparator } from '../../src/format/comparator.js';
import { bytewiseInternalComparator } from '../../src/format/internal-key-comparator.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { Block, type BlockIterator } from '../../src/sstable/block.js';
import { BlockBuilder } from '../../src/sstable/block-builder.js';

type Entry = [Uint8Array, Uint8Array];
const bytes = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));

/** Keys over a small alphabet so prefixes are shared; a few long keys and values. */
const keyArb = fc.oneof(
  { weight: 4, arbitrary: fc.uint8Array({ maxLength: 12, max: 3 }) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 100, maxLength: 200, max: 1 }) },
);
const valueArb = fc.oneof(
  { weight: 5, arbitrary: fc.uint8Array({ maxLength: 10 }) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 120, maxLength: 400 }) },
);
const entriesArb = fc
  .uniqueArray(fc.tuple(keyArb, valueArb), {
    maxLength: 80,
    selector: ([k]) => Buffer.from(k).toString('hex'),
  })
  .map((es) => es.sort((a, b) => compareWhole(a[0], b[0])) as Entry[]);

function build(entries: readonly Entry[], interval: number, builder = new BlockBuilder(interval, 64)): Uint8Array {
  for (const [k, v] of entries) builder.add(k, v);
  expect(builder.empty).toBe(entries.length === 0);
  const estimate = builder.currentSizeEstimate();
  const out = builder.finish();
  expect(out.length).toBe(estimate);
  return out.slice();
}

function current(it: BlockIterator): Entry {
  return [it.keyBuf.slice(0, it.keyLen), it.data.slice(it.valueStart, it.valueEnd)];
}

function forward(it: BlockIterator): Entry[] {
  const out: Entry[] = [];
  for (it.seekToFirst(); it.valid(); it.next()) out.push(current(it));
  return out;
}

function backward(it: BlockIterator): Entry[] {
  const out: Entry[] = [];
  for (it.seekToLast(); it.valid(); it.prev()) out.push(current(it));
  return out;
}

/** The index of the first entry >= target in `entries` (the model of seek). */
function lowerBound(entries: readonly Entry[], target: Uint8Array, cmp: Comparator): number {
  let i = 0;
  while (i < entries.length && cmp.compare(entries[i]![0], 0, entries[i]![0].length, target, 0, target.length) < 0) i++;
  return i;
}

function checkAgainstModel(entries: readonly Entry[], contents: Uint8Array, cmp: Comparator, probes: Uint8Array[]): void {
  const block = new Block(contents, 't.ldb', 0);
  const it = block.newIterator(cmp);
  expect(it.valid()).toBe(false);
  expect(forward(it)).toEqual(entries);
  expect(backward(it)).toEqual([...entries].reverse());
  for (const [i, [k]] of entries.entries()) {
    it.seek(k);
    expect(it.valid()).toBe(true);
    expect(current(it)).toEqual(entries[i]);
    // prev/next from a seek position agree with the model.
    it.prev();
    if (i === 0) expect(it.valid()).toBe(false);
    else expect(current(it)).toEqual(entries[i - 1]);
  }
  for (const t of probes) {
    // Seek via a sub-range of a larger buffer too.
    const padded = new Uint8Array(t.length + 3).fill(0xee);
    padded.set(t, 1);
    it.seek(padded, 1, 1 + t.length);
    const j = lowerBound(entries, t, cmp);
    if (j === entries.length) expect(it.valid()).toBe(false);
    else {
      expect(current(it)).toEqual(entries[j]);
      it.next();
      if (j + 1 === entries.length) expect(it.valid()).toBe(false);
      else expect(current(it)).toEqual(entries[j + 1]);
    }
  }
}

describe('BlockBuilder layout', () => {
  it('writes LevelDB\'s entry format: shared, non-shared, value length, delta, value; restarts; count', () => {
    const b = new BlockBuilder(2);
    b.add(bytes('apple'), bytes('1'));
    b.add(bytes('apricot'), bytes('22'));
    b.add(bytes('b'), bytes(''));
    const out = [...b.finish()];
    const e1 = [0, 5, 1, ...bytes('apple'), ...bytes('1')];
    const e2 = [2, 5, 2, ...bytes('ricot'), ...bytes('22')];
    const e3 = [0, 1, 0, ...bytes('b')]; // third entry: a restart point (interval 2)
    const restarts = [0, 0, 0, 0, e1.length + e2.length, 0, 0, 0, 2, 0, 0, 0];
    expect(out).toEqual([...e1, ...e2, ...e3, ...restarts]);
  });

  it('an empty block is one restart point at 0', () => {
    const b = new BlockBuilder();
    expect(b.empty).toBe(true);
    expect([...b.finish()]).toEqual([0, 0, 0, 0, 1, 0, 0, 0]);
    const it = new Block(b.finish()).newIterator(bytewiseComparator);
    it.seekToFirst();
    expect(it.valid()).toBe(false);
    it.seekToLast();
    expect(it.valid()).toBe(false);
    it.seek(bytes('a'));
    expect(it.valid()).toBe(false);
  });

  it('uses multi-byte varints for long keys and values and reuses its buffers after reset', () => {
    const entries: Entry[] = [
      [new Uint8Array(300).fill(1), new Uint8Array(20000).fill(2)],
      [new Uint8Array(301).fill(1), new Uint8Array(5).fill(3)],
    ];
    const b = new BlockBuilder(16, 64);
    const first = build(entries, 16, b);
    b.reset();
    expect(b.empty).toBe(true);
    expect(Buffer.from(build(entries, 16, b)).equals(first)).toBe(true);
    checkAgainstModel(entries, first, bytewiseComparator, []);
  });

  it('addSlicesSharing, told the prefix each key shares with the one before, lays out what addSlices does, across resets', () => {
    const keys = fc.array(fc.uint8Array({ maxLength: 10 }).map((k) => k.map((b) => b % 3)), { maxLength: 60 });
    fc.assert(
      fc.property(keys, fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 20 }), (raw, interval, perBlock) => {
        const sorted = [...new Map(raw.map((k) => [k.join(','), k])).values()].sort((a, b) => compareWhole(a, b));
        const plain = new BlockBuilder(interval, 64);
        const sharing = new BlockBuilder(interval, 64);
        let previous = new Uint8Array(0);
        for (let i = 0; i < sorted.length; i += perBlock) {
          for (const key of sorted.slice(i, i + perBlock)) {
            let shared = 0;
            while (shared < key.length && shared < previous.length && key[shared] === previous[shared]) shared++;
            plain.add(key, key);
            sharing.addSlicesSharing(shared, key, 0, key.length, key, 0, key.length);
            previous = key;
          }
          expect(sharing.finish()).toEqual(plain.finish());
          plain.reset();
          sharing.reset();
        }
      }),
      { numRuns: 200 },
    );
  });

  it('addSlicesSharing refuses a shared length outside its key', () => {
    const b = new BlockBuilder();
    const key = bytes('abc');
    for (const shared of [-1, 4]) {
      expect(() => b.addSlicesSharing(shared, key, 0, 3, key, 0, 3)).toThrow(/INVALID_ARGUMENT/);
    }
    expect(b.empty).toBe(true);
  });

  it('refuses a bad restart interval and add after finish', () => {
    expect(() => new BlockBuilder(0)).toThrow(/INVALID_ARGUMENT/);
    expect(() => new BlockBuilder(1.5)).toThrow(/INVALID_ARGUMENT/);
    const b = new BlockBuilder();
    b.finish();
    expect(() => b.add(bytes('a'), bytes('b'))).toThrow(/INVALID_ARGUMENT/);
  });
});

describe('Block round trip (fast-check)', () => {
  it('any sorted entries, restart interval 1..32: forward, backward, seek to and between keys', () => {
    fc.assert(
      fc.property(entriesArb, fc.integer({ min: 1, max: 32 }), fc.array(keyArb, { maxLength: 10 }), (entries, interval, probes) => {
        checkAgainstModel(entries, build(entries, interval), bytewiseComparator, probes);
      }),
      { numRuns: 150 },
    );
  });

  it('internal keys under the internal-key comparator (several versions per user key)', () => {
    const ikeysArb = fc
      .uniqueArray(fc.tuple(fc.uint8Array({ maxLength: 4, max: 2 }), fc.integer({ min: 0, max: 20 }), fc.constantFrom(0, 1)), {
        maxLength: 60,
        selector: ([u, s]) => `${Buffer.from(u).toString('hex')}/${s}`,
      })
      .map((ks) =>
        ks
          .map(([u, s, t]) => [encodeInternalKey(u, s, t as ValueType), new Uint8Array([s])] as Entry)
          .sort((a, b) => bytewiseInternalComparator.compare(a[0], 0, a[0].length, b[0], 0, b[0].length)),
      );
    const probesArb = fc.array(fc.tuple(fc.uint8Array({ maxLength: 5, max: 2 }), fc.integer({ min: 0, max: 21 })), { maxLength: 12 });
    fc.assert(
      fc.property(ikeysArb, fc.integer({ min: 1, max: 32 }), probesArb, (entries, interval, probes) => {
        // Probe: a lookup key for (u, s) lands on the newest version <= s of u.
        const targets = probes.map(([u, s]) => encodeInternalKey(u, s, ValueType.VALUE));
        checkAgainstModel(entries, build(entries, interval), bytewiseInternalComparator, targets);
      }),
      { numRuns: 300 },
    );
  });

  it('internal keys longer than a new iterator\'s key buffer, each sought by a new iterator', () => {
    // A seek's linear scan decodes the first keys an iterator sees: it must grow the buffer.
    const usersArb = fc.uniqueArray(fc.uint8Array({ minLength: 40, maxLength: 300, max: 1 }), {
      minLength: 1,
      maxLength: 40,
      selector: (u) => Buffer.from(u).toString('hex'),
    });
    fc.assert(
      fc.property(usersArb, fc.integer({ min: 1, max: 32 }), (users, interval) => {
        const entries = users
          .map((u) => [encodeInternalKey(u, 7, ValueType.VALUE), u.subarray(0, 3)] as Entry)
          .sort((a, b) => bytewiseInternalComparator.compare(a[0], 0, a[0].length, b[0], 0, b[0].length));
        const block = new Block(build(entries, interval));
        for (const [i, [k]] of entries.entries()) {
          const it = block.newIterator(bytewiseInternalComparator);
          it.seek(k);
          expect(current(it)).toEqual(entries[i]);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('internal keys whose entries share fewer bytes than they could (another writer): seeks still land right', () => {
    // LevelDB's format does not require an entry to share all the bytes it has in common with the
    // key before it; a seek may trust only what an entry says it shares.
    const ikeysArb = fc
      .uniqueArray(fc.tuple(fc.uint8Array({ maxLength: 5, max: 2 }), fc.integer({ min: 0, max: 9 })), {
        maxLength: 50,
        selector: ([u, s]) => `${Buffer.from(u).toString('hex')}/${s}`,
      })
      .map((ks) =>
        ks
          .map(([u, s]) => encodeInternalKey(u, s, ValueType.VALUE))
          .sort((a, b) => bytewiseInternalComparator.compare(a, 0, a.length, b, 0, b.length)),
      );
    fc.assert(
      fc.property(ikeysArb, fc.array(fc.nat(), { minLength: 50, maxLength: 50 }), fc.integer({ min: 1, max: 8 }), fc.array(fc.tuple(fc.uint8Array({ maxLength: 5, max: 2 }), fc.integer({ min: 0, max: 9 })), { maxLength: 10 }), (keys, cuts, interval, probes) => {
        const bytes: number[] = [];
        const restarts: number[] = [];
        keys.forEach((k, i) => {
          let shared = 0;
          if (i % interval === 0) restarts.push(bytes.length);
          else {
            const prev = keys[i - 1]!;
            let lcp = 0;
            while (lcp < prev.length && lcp < k.length && prev[lcp] === k[lcp]) lcp++;
            shared = cuts[i]! % (lcp + 1); // anything from none to all of the common prefix
          }
          bytes.push(shared, k.length - shared, 1, ...k.subarray(shared), i);
        });
        if (keys.length === 0) restarts.push(0);
        for (const r of restarts) bytes.push(r & 0xff, r >>> 8, 0, 0);
        bytes.push(restarts.length, 0, 0, 0);
        const entries = keys.map((k, i) => [k, new Uint8Array([i])] as Entry);
        const targets = probes.map(([u, s]) => encodeInternalKey(u, s, ValueType.VALUE));
        checkAgainstModel(entries, new Uint8Array(bytes), bytewiseInternalComparator, targets);
      }),
      { numRuns: 300 },
    );
  });

  it('any walk of next, prev, seeks and block switches lands where the model does (the prev run cache)', () => {
    type Step = { op: 'next' | 'prev' | 'first' | 'last' | 'switch' } | { op: 'seek'; key: Uint8Array };
    const stepArb: fc.Arbitrary<Step> = fc.oneof(
      { weight: 4, arbitrary: fc.constant({ op: 'prev' as const }) },
      { weight: 2, arbitrary: fc.constant({ op: 'next' as const }) },
      fc.constant({ op: 'first' as const }),
      fc.constant({ op: 'last' as const }),
      fc.constant({ op: 'switch' as const }),
      keyArb.map((key) => ({ op: 'seek' as const, key })),
    );
    fc.assert(
      fc.property(
        entriesArb,
        entriesArb,
        fc.integer({ min: 1, max: 32 }),
        fc.array(stepArb, { maxLength: 120 }),
        (entriesA, entriesB, interval, steps) => {
          const blocks = [new Block(build(entriesA, interval)), new Block(build(entriesB, interval))];
          const models = [entriesA, entriesB];
          let which = 0;
          const it = blocks[0]!.newIterator(bytewiseComparator);
          let at = -1; // the model's position; -1 or length: invalid
          for (const step of steps) {
            const entries = models[which]!;
            if (step.op === 'switch') {
              which = 1 - which;
              it.setBlock(blocks[which]!);
              at = -1;
              continue;
            }
            if ((step.op === 'next' || step.op === 'prev') && !it.valid()) continue;
            if (step.op === 'next') at++;
            else if (step.op === 'prev') at--;
            else if (step.op === 'first') at = 0;
            else if (step.op === 'last') at = entries.length - 1;
            else if (step.op === 'seek') at = lowerBound(entries, step.key, bytewiseComparator);
            if (step.op === 'next') it.next();
            else if (step.op === 'prev') it.prev();
            else if (step.op === 'first') it.seekToFirst();
            else if (step.op === 'last') it.seekToLast();
            else if (step.op === 'seek') it.seek(step.key);
            if (at < 0 || at >= entries.length) {
              expect(it.valid()).toBe(false);
              at = -1;
            } else {
              expect(current(it)).toEqual(entries[at]);
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

/** Up to four bytes of a block to damage: (position modulo the length, XOR mask). */
const flipsArb = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 });

function flip(bytes: Uint8Array, flips: readonly [number, number][]): void {
  for (const [pos, x] of flips) bytes[pos % bytes.length]! ^= x;
}

describe('Block validation and corruption', () => {
  const expectCorruption = (fn: () => unknown): void => {
    try {
      fn();
      expect.unreachable();
    } catch (err) {
      expect(isSieveError(err, 'CORRUPTION'), String(err)).toBe(true);
    }
  };

  it('rejects short blocks, impossible restart counts and bad restart offsets', () => {
    expectCorruption(() => new Block(new Uint8Array(3)));
    expectCorruption(() => new Block(new Uint8Array([0, 0, 0, 0, 2, 0, 0, 0]))); // 2 restarts in 8 bytes
    expectCorruption(() => new Block(new Uint8Array([1, 2, 3, 0, 0, 0, 0]))); // entries, no restarts
    expectCorruption(() => new Block(new Uint8Array([0, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0]))); // first restart not 0
    const two = build([[bytes('a'), bytes('1')], [bytes('b'), bytes('2')]], 1);
    const bad = two.slice();
    bad[two.length - 8] = 200; // second restart past the entries
    expectCorruption(() => new Block(bad));
    expect(() => new Block(new Uint8Array([0, 0, 0, 0]))).not.toThrow(); // no entries, no restarts
  });

  it('names the file and block offset', () => {
    try {
      new Block(new Uint8Array(2), '000012.ldb', 4096);
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ code: 'CORRUPTION', file: '000012.ldb', offset: 4096 });
    }
  });

  it('an entry sharing more than the previous key, or running past the entries, is CORRUPTION', () => {
    // One entry claiming 3 shared bytes at a restart point.
    const block = new Block(new Uint8Array([3, 1, 0, 0x61, 0, 0, 0, 0, 1, 0, 0, 0]));
    const it = block.newIterator(bytewiseComparator);
    expectCorruption(() => it.seekToFirst());
    expect(it.valid()).toBe(false);
    const long = new Block(new Uint8Array([0, 9, 0, 0x61, 0, 0, 0, 0, 1, 0, 0, 0]));
    expectCorruption(() => long.newIterator(bytewiseComparator).seekToFirst());
  });

  it('random byte flips, truncations and extensions: correct entries or CORRUPTION, never anything else', () => {
    fc.assert(
      fc.property(
        entriesArb,
        fc.integer({ min: 1, max: 20 }),
        flipsArb,
        fc.oneof(fc.constant(0), fc.integer({ min: -12, max: 12 })),
        fc.array(keyArb, { maxLength: 4 }),
        (entries, interval, flips, resize, probes) => {
          const good = build(entries, interval);
          let bad = good.slice();
          flip(bad, flips);
          if (resize < 0) bad = bad.subarray(0, Math.max(0, bad.length + resize));
          if (resize > 0) {
            const ext = new Uint8Array(bad.length + resize);
            ext.set(bad);
            bad = ext;
          }
          try {
            const block = new Block(bad);
            const it = block.newIterator(bytewiseComparator);
            const seen = forward(it);
            backward(it);
            for (const t of [...probes, ...entries.map((e) => e[0])]) {
              it.seek(t);
              if (it.valid()) {
                expect(it.valueEnd).toBeLessThanOrEqual(block.restartOffset);
                it.next();
              }
            }
            // Without a checksum a flip inside a key or value can go unnoticed; the structure
            // cannot: every entry decoded lies inside the entry area.
            expect(seen.length).toBeLessThanOrEqual(block.restartOffset / 3);
          } catch (err) {
            if (!isSieveError(err, 'CORRUPTION')) throw err;
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('seeks of internal keys in a damaged block, each by a new iterator: an entry inside the entry area, or CORRUPTION', () => {
    fc.assert(
      fc.property(
        entriesArb,
        fc.integer({ min: 1, max: 20 }),
        flipsArb,
        fc.array(keyArb, { maxLength: 4 }),
        (entries, interval, flips, probes) => {
          const internal = entries.map(([k, v]) => [encodeInternalKey(k, 1, ValueType.VALUE), v] as Entry);
          const bad = build(internal, interval);
          flip(bad, flips);
          let block: Block;
          try {
            block = new Block(bad);
          } catch (err) {
            if (!isSieveError(err, 'CORRUPTION')) throw err;
            return;
          }
          for (const t of [...probes.map((p) => encodeInternalKey(p, 1, ValueType.VALUE)), ...internal.map((e) => e[0])]) {
            const it = block.newIterator(bytewiseInternalComparator);
            try {
              it.seek(t);
            } catch (err) {
              if (!isSieveError(err, 'CORRUPTION')) throw err;
              expect(it.valid()).toBe(false);
              continue;
            }
            if (it.valid()) {
              expect(it.valueStart).toBeLessThanOrEqual(it.valueEnd);
              expect(it.valueEnd).toBeLessThanOrEqual(block.restartOffset);
            }
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});
