/**
 * DBIterator and EntryIterator against a model: random histories of puts and deletions (several
 * versions per key), dealt among memtables, blocks and arrays under a merging iterator, seen at a
 * random snapshot with random bounds, direction and limit. The model is a sorted map of the newest
 * version ≤ the snapshot of each key, deletions removed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareWhole } from '../../src/format/comparator.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { DBIterator, type UserKeyBounds } from '../../src/iterator/db-iterator.js';
import { createEntryIterator } from '../../src/iterator/entry-iterator.js';
import { resolveIteratorOptions, type IteratorRangeOptions } from '../../src/iterator/iterator-options.js';
import { rng } from '../support/seed.js';
import type { Entry } from './array-iterator.js';
import { compareEntries } from './iterator-contract.js';
import { mergedSourceOf } from './sources.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

interface Write {
  key: Uint8Array;
  del: boolean;
  value: Uint8Array;
}

const keyArb = fc.oneof(
  { weight: 8, arbitrary: fc.uint8Array({ maxLength: 3, max: 3 }) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 50, maxLength: 60, max: 1 }) },
);
const writeArb: fc.Arbitrary<Write> = fc.record({
  key: keyArb,
  del: fc.integer({ min: 0, max: 2 }).map((x) => x === 0), // a third are deletions
  value: fc.uint8Array({ maxLength: 5, size: 'max' }),
});

/** A history: write i has sequence base + i (unique, increasing, as in the database). */
const historyArb = fc.record({
  writes: fc.array(writeArb, { maxLength: 80, size: 'max' }),
  base: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2 ** 40 })),
});

function internalEntries(writes: readonly Write[], base: number): Entry[] {
  return writes
    .map((w, i) => ({
      key: encodeInternalKey(w.key, base + i, w.del ? ValueType.DELETION : ValueType.VALUE),
      value: w.del ? new Uint8Array(0) : w.value,
    }))
    .sort(compareEntries);
}

type Pair = [string, string]; // hex key, hex value

/** The visible, in-bounds pairs in ascending key order. */
function model(writes: readonly Write[], base: number, snapshot: number, bounds: UserKeyBounds): Pair[] {
  const newest = new Map<string, Write>();
  writes.forEach((w, i) => {
    if (base + i <= snapshot) newest.set(hex(w.key), w); // later writes overwrite
  });
  const inBounds = (k: Uint8Array): boolean => {
    if (bounds.lower !== null) {
      const c = compareWhole(k, bounds.lower);
      if (c < 0 || (c === 0 && !bounds.lowerInclusive)) return false;
    }
    if (bounds.upper !== null) {
      const c = compareWhole(k, bounds.upper);
      if (c > 0 || (c === 0 && !bounds.upperInclusive)) return false;
    }
    return true;
  };
  return [...newest.values()]
    .filter((w) => !w.del && inBounds(w.key))
    .sort((a, b) => compareWhole(a.key, b.key))
    .map((w) => [hex(w.key), hex(w.value)]);
}

const boundArb = fc.option(fc.record({ key: keyArb, inclusive: fc.boolean() }), { nil: undefined });
const optionsArb = fc.record({
  lower: boundArb,
  upper: boundArb,
  reverse: fc.boolean(),
  limit: fc.oneof(fc.constant(undefined), fc.constant(-1), fc.nat(12)),
});

function toRangeOptions(o: typeof optionsArb extends fc.Arbitrary<infer T> ? T : never): IteratorRangeOptions {
  const r: IteratorRangeOptions = { reverse: o.reverse };
  if (o.lower) r[o.lower.inclusive ? 'gte' : 'gt'] = o.lower.key;
  if (o.upper) r[o.upper.inclusive ? 'lte' : 'lt'] = o.upper.key;
  if (o.limit !== undefined) r.limit = o.limit;
  return r;
}

const scenarioArb = fc.record({ history: historyArb, snapshotOffset: fc.integer({ min: -1, max: 90 }), seed: fc.integer() });

function snapshotOf(s: { history: { base: number }; snapshotOffset: number }): number {
  return Math.max(0, s.history.base + s.snapshotOffset);
}

describe('EntryIterator (db.iterator) against the model', () => {
  it('yields the newest visible version of each key, deletions hidden, bounded, reversed, limited', () => {
    fc.assert(
      fc.property(scenarioArb, optionsArb, (s, o) => {
        const { writes, base } = s.history;
        const snapshot = snapshotOf(s);
        const options = resolveIteratorOptions(toRangeOptions(o));
        let releases = 0;
        const it = createEntryIterator(mergedSourceOf(internalEntries(writes, base), rng(s.seed)), snapshot, options, () => releases++);
        const got = [...it].map(([k, v]): Pair => [hex(k), hex(v)]); // kept across steps: owned copies
        let expected = model(writes, base, snapshot, options);
        if (options.reverse) expected.reverse();
        expected = expected.slice(0, options.limit);
        expect(got).toEqual(expected);
        expect(releases).toBe(1);
        expect(it.closed).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('for await yields the same entries', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, optionsArb, async (s, o) => {
        const { writes, base } = s.history;
        const snapshot = snapshotOf(s);
        const options = resolveIteratorOptions(toRangeOptions(o));
        let releases = 0;
        const it = createEntryIterator(mergedSourceOf(internalEntries(writes, base), rng(s.seed)), snapshot, options, () => releases++);
        const got: Pair[] = [];
        for await (const [k, v] of it) got.push([hex(k), hex(v)]);
        let expected = model(writes, base, snapshot, options);
        if (options.reverse) expected.reverse();
        expect(got).toEqual(expected.slice(0, options.limit));
        expect(releases).toBe(1);
      }),
      { numRuns: 60 },
    );
  });
});

type Op =
  | { op: 'next' | 'prev' | 'first' | 'last' }
  | { op: 'seek' | 'seekForPrev'; key: Uint8Array };
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom<Op>({ op: 'next' }, { op: 'prev' }) },
  { weight: 1, arbitrary: fc.constantFrom<Op>({ op: 'first' }, { op: 'last' }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('seek' as const, 'seekForPrev' as const), key: keyArb }) },
);

describe('DBIterator random walks', () => {
  it('next, prev, seeks and direction switches match the model at every step', () => {
    fc.assert(
      fc.property(scenarioArb, optionsArb, fc.array(opArb, { maxLength: 60, size: 'max' }), (s, o, ops) => {
        const { writes, base } = s.history;
        const snapshot = snapshotOf(s);
        const bounds = resolveIteratorOptions(toRangeOptions(o));
        const it = new DBIterator(mergedSourceOf(internalEntries(writes, base), rng(s.seed)), snapshot, bounds);
        const m = model(writes, base, snapshot, bounds);
        let index = -1; // -1 or m.length: invalid
        for (const op of ops) {
          const valid = index >= 0 && index < m.length;
          switch (op.op) {
            case 'next':
              if (!valid) continue;
              it.next();
              index++;
              break;
            case 'prev':
              if (!valid) continue;
              it.prev();
              index--;
              break;
            case 'first':
              it.seekToFirst();
              index = 0;
              break;
            case 'last':
              it.seekToLast();
              index = m.length - 1;
              break;
            case 'seek': {
              it.seek(op.key);
              const k = hex(op.key);
              index = m.findIndex(([mk]) => compareWhole(Buffer.from(mk, 'hex'), op.key) >= 0 || mk === k);
              if (index < 0) index = m.length;
              break;
            }
            case 'seekForPrev': {
              it.seekForPrev(op.key);
              index = -1;
              for (let i = 0; i < m.length; i++) if (compareWhole(Buffer.from(m[i]![0], 'hex'), op.key) <= 0) index = i;
              break;
            }
          }
          if (index < 0 || index >= m.length) {
            expect(it.valid()).toBe(false);
          } else {
            expect(it.valid()).toBe(true);
            expect([hex(it.key()), hex(it.value())]).toEqual(m[index]);
            expect(hex(it.keyBuffer())).toBe(m[index]![0]);
            // Owned copies: in reverse the first is the saved value handed over, the next a copy.
            const first = it.valueBuffer();
            const second = it.valueBuffer();
            expect([hex(first), hex(second)]).toEqual([m[index]![1], m[index]![1]]);
            first.fill(0xee);
            expect(hex(second)).toBe(m[index]![1]);
          }
        }
        it.close();
      }),
      { numRuns: 300 },
    );
  });
});
