/**
 * The InternalIterator contract suite (STYLE.md §12): one set of checks run against every
 * iterator over internal keys (memtable adapter, block, table, merging, level, the reference
 * array iterator). Each implementation supplies a factory that builds an iterator over a given
 * sorted list of (internal key, value) entries; the suite compares what the iterator shows with
 * that list, for fast-check generated lists:
 *
 * - seekToFirst + next walks every entry in order; seekToLast + prev walks them in reverse;
 * - seek to every key, and to targets between and around keys (other sequences and types, the
 *   all-ones and LevelDB's 2^56 − 1 seek trailers, the (seq 0, deletion) trailer), lands on the
 *   first entry ≥ the target;
 * - random walks mixing seeks, next and prev (so direction switches mid-way) match the model,
 *   reading the borrowed key and value again after every move, in both orders;
 * - an empty iterator is never valid; close is idempotent.
 *
 * The checks are plain functions that throw on a mismatch, so a test can also show that a broken
 * iterator fails them (the suite can fail).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareInternalKeys, encodeInternalKey, MAX_SEQUENCE, ValueType } from '../../src/format/internal-key.js';
import type { InternalIterator } from '../../src/iterator/internal-iterator.js';
import { rng } from '../support/seed.js';
import type { Entry } from './array-iterator.js';

export type { Entry } from './array-iterator.js';

/** Builds an iterator over `entries` (sorted, distinct internal keys); `random` drives any split. */
export type BuildIterator = (entries: readonly Entry[], random: () => number) => InternalIterator;

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const u8 = (b: Uint8Array): Uint8Array => new Uint8Array(b);

export function compareEntries(a: Entry, b: Entry): number {
  return compareInternalKeys(a.key, 0, a.key.length, b.key, 0, b.key.length);
}

/** User keys over a tiny alphabet (many shared prefixes and equal keys), a few long ones. */
export const userKeyArb = fc.oneof(
  { weight: 6, arbitrary: fc.uint8Array({ maxLength: 5, max: 3 }) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 40, maxLength: 70, max: 1 }) },
);
/** Mostly small sequences (versions collide), sometimes huge ones (up to 2^53 − 1). */
export const seqArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom(MAX_SEQUENCE, MAX_SEQUENCE - 1, 2 ** 24, 2 ** 24 - 1, 2 ** 32) },
);

/**
 * Sorted entries with distinct (user key, sequence) — what every real source holds (the memtable
 * requires it) — and random types; deletions carry empty values, as in the memtable.
 */
export function entriesArb(maxLength = 60): fc.Arbitrary<Entry[]> {
  return fc
    .uniqueArray(
      fc.record({ userKey: userKeyArb, seq: seqArb, del: fc.boolean(), value: fc.uint8Array({ maxLength: 6, size: 'max' }) }),
      { maxLength, size: 'max', selector: (e) => `${hex(e.userKey)}/${e.seq}` },
    )
    .map((es) =>
      es
        .map((e) => ({
          key: encodeInternalKey(e.userKey, e.seq, e.del ? ValueType.DELETION : ValueType.VALUE),
          value: e.del ? new Uint8Array(0) : e.value,
        }))
        .sort(compareEntries),
    );
}

/** A seek target recipe, resolved against the entries (so targets fall on and near real keys). */
export interface TargetRecipe {
  pick: number;
  variant: number;
  userKey: Uint8Array;
  seq: number;
  type: number;
}
export const targetArb: fc.Arbitrary<TargetRecipe> = fc.record({
  pick: fc.nat(),
  variant: fc.integer({ min: 0, max: 6 }),
  userKey: userKeyArb,
  seq: seqArb,
  type: fc.integer({ min: 0, max: 1 }),
});

function withTrailer(userKey: Uint8Array, lo: number, hi: number): Uint8Array {
  const out = new Uint8Array(userKey.length + 8);
  out.set(userKey);
  Buffer.from(out.buffer, out.byteOffset, out.length).writeUInt32LE(lo >>> 0, userKey.length);
  Buffer.from(out.buffer, out.byteOffset, out.length).writeUInt32LE(hi >>> 0, userKey.length + 4);
  return out;
}

export function resolveTarget(r: TargetRecipe, entries: readonly Entry[]): Uint8Array {
  const base = entries.length > 0 ? entries[r.pick % entries.length]!.key : r.userKey;
  const user = r.variant === 6 || entries.length === 0 ? r.userKey : base.subarray(0, base.length - 8);
  switch (r.variant) {
    case 0:
      return entries.length > 0 ? base : encodeInternalKey(user, r.seq, r.type as ValueType);
    case 1: // the same user key, another sequence and type
      return encodeInternalKey(user, r.seq, r.type as ValueType);
    case 2: { // the same (key, seq), the other type: (k, s, VALUE) < (k, s, DELETION)
      const t = base.slice();
      t[t.length - 8]! ^= 1;
      return entries.length > 0 ? t : encodeInternalKey(user, r.seq, r.type as ValueType);
    }
    case 3: // the all-ones trailer: before every version of the key
      return withTrailer(user, 0xffffffff, 0xffffffff);
    case 4: // LevelDB's (2^56 − 1, kValueTypeForSeek), as in shortened index separators
      return withTrailer(user, 0xffffff01, 0xffffffff);
    case 5: // (seq 0, deletion): after every version of the key
      return withTrailer(user, 0, 0);
    default:
      return encodeInternalKey(user, r.seq, r.type as ValueType);
  }
}

/** The index of the first entry ≥ target (entries.length if none): the model of seek. */
export function lowerBound(entries: readonly Entry[], target: Uint8Array): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const k = entries[mid]!.key;
    if (compareInternalKeys(k, 0, k.length, target, 0, target.length) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Asserts the iterator shows entry `index` (invalid when out of range), reading key and value twice. */
export function expectAt(it: InternalIterator, entries: readonly Entry[], index: number, keyFirst = true): void {
  if (index < 0 || index >= entries.length) {
    expect(it.valid(), `expected invalid at model index ${index}`).toBe(false);
    return;
  }
  expect(it.valid(), `expected valid at model index ${index}`).toBe(true);
  const e = entries[index]!;
  if (keyFirst) {
    expect(hex(it.key())).toBe(hex(e.key));
    expect(hex(it.value())).toBe(hex(e.value));
  } else {
    expect(hex(it.value())).toBe(hex(e.value));
    expect(hex(it.key())).toBe(hex(e.key));
  }
  // Re-reading without a move shows the same bytes (reading one must not clobber the other).
  expect(hex(it.key())).toBe(hex(e.key));
  expect(hex(it.value())).toBe(hex(e.value));
}

export function checkWalks(it: InternalIterator, entries: readonly Entry[]): void {
  const forward: Entry[] = [];
  for (it.seekToFirst(); it.valid(); it.next()) forward.push({ key: u8(it.key()), value: u8(it.value()) });
  expect(forward.map((e) => hex(e.key) + ':' + hex(e.value))).toEqual(entries.map((e) => hex(e.key) + ':' + hex(e.value)));
  const backward: string[] = [];
  for (it.seekToLast(); it.valid(); it.prev()) backward.push(hex(it.key()) + ':' + hex(it.value()));
  expect(backward).toEqual(entries.map((e) => hex(e.key) + ':' + hex(e.value)).reverse());
}

export function checkSeeks(it: InternalIterator, entries: readonly Entry[], recipes: readonly TargetRecipe[]): void {
  for (let i = 0; i < entries.length; i++) {
    it.seek(entries[i]!.key);
    expectAt(it, entries, i);
  }
  for (const r of recipes) {
    const target = resolveTarget(r, entries);
    it.seek(target);
    expectAt(it, entries, lowerBound(entries, target), r.pick % 2 === 0);
  }
}

export type WalkOp =
  | { op: 'next' | 'prev' | 'first' | 'last' }
  | { op: 'seek'; target: TargetRecipe };

export const walkOpArb: fc.Arbitrary<WalkOp> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom<WalkOp>({ op: 'next' }, { op: 'prev' }) },
  { weight: 1, arbitrary: fc.constantFrom<WalkOp>({ op: 'first' }, { op: 'last' }) },
  { weight: 2, arbitrary: targetArb.map((target): WalkOp => ({ op: 'seek', target })) },
);

/**
 * Runs `ops` on the iterator and on the model index, comparing after every step. `next`/`prev`
 * on an invalid iterator are skipped (the contract requires `valid()`). Key and value are read
 * afresh after every move (borrowed views are not kept), alternating which is read first.
 */
export function checkRandomWalk(it: InternalIterator, entries: readonly Entry[], ops: readonly WalkOp[]): void {
  let index = entries.length; // "invalid"
  const n = entries.length;
  let step = 0;
  for (const o of ops) {
    step++;
    switch (o.op) {
      case 'next':
      case 'prev':
        if (index < 0 || index >= n) continue;
        if (o.op === 'next') {
          it.next();
          index++;
        } else {
          it.prev();
          index--;
        }
        break;
      case 'first':
        it.seekToFirst();
        index = 0;
        break;
      case 'last':
        it.seekToLast();
        index = n - 1;
        break;
      case 'seek': {
        const target = resolveTarget(o.target, entries);
        it.seek(target);
        index = lowerBound(entries, target);
        break;
      }
    }
    expectAt(it, entries, index, step % 2 === 0);
  }
}

export interface ContractOptions {
  numRuns?: number;
  maxEntries?: number;
}

/** Registers the contract's tests for one implementation. */
export function iteratorContract(name: string, build: BuildIterator, options: ContractOptions = {}): void {
  const numRuns = options.numRuns ?? 100;
  const arb = entriesArb(options.maxEntries ?? 60);
  const seedArb = fc.integer();

  describe(`InternalIterator contract: ${name}`, () => {
    it('walks every entry forward with next and backward with prev', () => {
      fc.assert(
        fc.property(arb, seedArb, (entries, seed) => {
          const it = build(entries, rng(seed));
          checkWalks(it, entries);
          it.close();
        }),
        { numRuns },
      );
    });

    it('seek lands on the first entry at or after the target', () => {
      fc.assert(
        fc.property(arb, seedArb, fc.array(targetArb, { maxLength: 30, size: 'max' }), (entries, seed, recipes) => {
          const it = build(entries, rng(seed));
          checkSeeks(it, entries, recipes);
          it.close();
        }),
        { numRuns },
      );
    });

    it('random walks of seeks, next and prev (direction switches) match the model', () => {
      fc.assert(
        fc.property(arb, seedArb, fc.array(walkOpArb, { maxLength: 60, size: 'max' }), (entries, seed, ops) => {
          const it = build(entries, rng(seed));
          checkRandomWalk(it, entries, ops);
          it.close();
        }),
        { numRuns },
      );
    });

    it('an empty iterator is never valid; close is idempotent', () => {
      fc.assert(
        fc.property(seedArb, fc.array(targetArb, { maxLength: 5, size: 'max' }), (seed, recipes) => {
          const it = build([], rng(seed));
          expect(it.valid()).toBe(false);
          it.seekToFirst();
          expect(it.valid()).toBe(false);
          it.seekToLast();
          expect(it.valid()).toBe(false);
          for (const r of recipes) {
            it.seek(resolveTarget(r, []));
            expect(it.valid()).toBe(false);
          }
          it.close();
          it.close();
        }),
        { numRuns: Math.min(numRuns, 20) },
      );
    });
  });
}
