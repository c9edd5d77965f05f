import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { compareBytes } from '../../src/format/bytes.js';
import { encodeInternalKey, INTERNAL_KEY_TRAILER_SIZE, ValueType } from '../../src/format/internal-key.js';
import { bytewiseComparator } from '../../src/format/comparator.js';
import { bytewiseInternalComparator, InternalKeyComparator } from '../../src/format/internal-key-comparator.js';
import type { InternalIterator } from '../../src/iterator/internal-iterator.js';
import { keyWindow, MergingIterator, newMergingIterator, WINDOW_BYTES } from '../../src/iterator/merging-iterator.js';
import { rng } from '../support/seed.js';
import { ArrayIterator } from './array-iterator.js';
import { sourceOf, splitRandomly } from './sources.js';
import {
  checkRandomWalk,
  checkWalks,
  compareEntries,
  entriesArb,
  iteratorContract,
  targetArb,
  checkSeeks,
  userKeyArb,
  walkOpArb,
  type Entry,
} from './iterator-contract.js';

/** The bytes every user key of `entries` starts with. */
function commonUserPrefix(entries: readonly Entry[]): Uint8Array {
  if (entries.length === 0) return new Uint8Array(0);
  const first = entries[0]!.key;
  let n = first.length - INTERNAL_KEY_TRAILER_SIZE;
  for (const e of entries) {
    const limit = Math.min(n, e.key.length - INTERNAL_KEY_TRAILER_SIZE);
    let i = 0;
    while (i < limit && e.key[i] === first[i]) i++;
    n = i;
  }
  return first.slice(0, n);
}

iteratorContract('MergingIterator', (entries, random) => {
  const parts = splitRandomly(entries, random);
  return new MergingIterator(parts.map((p) => sourceOf(p, random)));
});

iteratorContract('MergingIterator with many children (heap depth)', (entries, random) => {
  // One child per entry and some empty ones: the heap has up to ~70 children.
  const children: InternalIterator[] = entries.map((e) => new ArrayIterator([e]));
  for (let i = 0; i < 8; i++) children.splice(Math.floor(random() * (children.length + 1)), 0, new ArrayIterator([]));
  return new MergingIterator(children);
}, { numRuns: 50 });

iteratorContract('MergingIterator with key windows after the shared prefix', (entries, random) => {
  const parts = splitRandomly(entries, random);
  return new MergingIterator(parts.map((p) => sourceOf(p, random)), bytewiseInternalComparator, { sharedPrefix: commonUserPrefix(entries) });
});

describe('MergingIterator key windows', () => {
  it('a window orders two keys as their user keys, or ties', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 8 }), userKeyArb, userKeyArb, fc.nat({ max: 2 ** 40 }), (prefix, a, b, seq) => {
        const ka = encodeInternalKey(Uint8Array.of(...prefix, ...a), seq, ValueType.VALUE);
        const kb = encodeInternalKey(Uint8Array.of(...prefix, ...b), seq + 1, ValueType.DELETION);
        const wa = keyWindow(ka, prefix.length);
        const wb = keyWindow(kb, prefix.length);
        const c = Math.sign(compareBytes(Uint8Array.of(...a), Uint8Array.of(...b)));
        if (wa !== wb) expect(Math.sign(wa - wb)).toBe(c);
        // Keys that differ within the window never tie.
        const differsInside = a.length !== b.length || a.some((x, i) => x !== b[i]);
        const sameWindowBytes = [...Array(WINDOW_BYTES).keys()].every((i) => (a[i] ?? 0) === (b[i] ?? 0));
        if (differsInside && !sameWindowBytes) expect(wa).not.toBe(wb);
      }),
      { numRuns: 500 },
    );
  });

  it('merges children whose keys share a prefix as the plain merge does, walks and seeks', () => {
    const arb = fc.tuple(fc.uint8Array({ maxLength: 12 }), entriesArb(50), fc.integer(), fc.array(walkOpArb, { maxLength: 40, size: 'max' }), fc.array(targetArb, { maxLength: 10 }));
    fc.assert(
      fc.property(arb, ([prefix, base, seed, ops, recipes]) => {
        // The same entries with `prefix` before every user key: the order is unchanged.
        const entries = base.map((e) => ({ key: Uint8Array.of(...prefix, ...e.key), value: e.value }));
        const random = rng(seed);
        const parts = splitRandomly(entries, random, 8);
        const make = (): MergingIterator =>
          new MergingIterator(parts.map((p) => new ArrayIterator(p)), bytewiseInternalComparator, { sharedPrefix: commonUserPrefix(entries) });
        checkWalks(make(), entries);
        checkRandomWalk(make(), entries, ops);
        checkSeeks(make(), entries, recipes);
      }),
      { numRuns: 200 },
    );
  });

  it('takes a shared prefix only with the bytewise internal order', () => {
    // Another instance may wrap any user order: windows hold only for the bytewise one.
    const other = new InternalKeyComparator(bytewiseComparator);
    expect(() => new MergingIterator([], other, { sharedPrefix: new Uint8Array(0) })).toThrow(/sharedPrefix/);
  });

  it('a child key without the shared prefix is CORRUPTION, found as it is read', () => {
    const at = (user: string, seq: number): Entry => ({ key: encodeInternalKey(Buffer.from(user), seq, ValueType.VALUE), value: Uint8Array.of() });
    for (const stray of ['z', 'k', 'j999']) {
      // One child's last key lacks the prefix "k1" (in key order it belongs after, or before, the rest).
      const keys = stray < 'k1' ? [stray, 'k100', 'k120'] : ['k100', 'k120', stray];
      const children = [new ArrayIterator(keys.map((k, i) => at(k, i + 1))), new ArrayIterator([at('k110', 9), at('k130', 9)])];
      const it = new MergingIterator(children, bytewiseInternalComparator, { sharedPrefix: Buffer.from('k1') });
      let error: unknown;
      try {
        for (it.seekToFirst(); it.valid(); it.next());
        for (it.seekToLast(); it.valid(); it.prev());
      } catch (err) {
        error = err;
      }
      expect(isSieveError(error) && error.code, stray).toBe('CORRUPTION');
    }
  });
});

describe('MergingIterator', () => {
  it('orders equal internal keys in different children by child index, and reverses that exactly', () => {
    const dupArb = fc.tuple(entriesArb(25), fc.integer({ min: 2, max: 5 }), fc.integer(), fc.array(walkOpArb, { maxLength: 60, size: 'max' }));
    fc.assert(
      fc.property(dupArb, ([base, n, seed, ops]) => {
        const random = rng(seed);
        // Each child holds a random subset of the same keys; values name the child.
        const parts: Entry[][] = Array.from({ length: n }, () => []);
        const model: (Entry & { child: number })[] = [];
        for (const e of base) {
          for (let c = 0; c < n; c++) {
            if (random() < 0.6) {
              const entry = { key: e.key, value: Uint8Array.of(c, ...e.value) };
              parts[c]!.push(entry);
              model.push({ ...entry, child: c });
            }
          }
        }
        model.sort((a, b) => compareEntries(a, b) || a.child - b.child);
        const make = (): MergingIterator => new MergingIterator(parts.map((p) => new ArrayIterator(p)));
        checkWalks(make(), model);
        checkRandomWalk(make(), model, ops);
      }),
      { numRuns: 150 },
    );
  });

  it('close closes every child once per call and is idempotent for the children', () => {
    const children = [new ArrayIterator([]), new ArrayIterator([])];
    const it = new MergingIterator(children);
    it.close();
    it.close();
    expect(children.map((c) => c.closed)).toEqual([2, 2]);
    expect(it.valid()).toBe(false);
  });

  it('close closes the remaining children even if one throws, then rethrows', () => {
    const ok = new ArrayIterator([]);
    const bad = new ArrayIterator([]);
    bad.close = () => {
      throw new Error('boom');
    };
    expect(() => new MergingIterator([bad, ok]).close()).toThrow('boom');
    expect(ok.closed).toBe(1);
  });

  it('newMergingIterator returns a single child itself', () => {
    const only = new ArrayIterator([{ key: encodeInternalKey(Uint8Array.of(1), 1, ValueType.VALUE), value: Uint8Array.of() }]);
    expect(newMergingIterator([only])).toBe(only);
    const none = newMergingIterator([]);
    none.seekToFirst();
    expect(none.valid()).toBe(false);
  });
});
