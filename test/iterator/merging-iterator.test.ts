import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import type { InternalIterator } from '../../src/iterator/internal-iterator.js';
import { MergingIterator, newMergingIterator } from '../../src/iterator/merging-iterator.js';
import { rng } from '../support/seed.js';
import { ArrayIterator } from './array-iterator.js';
import { sourceOf, splitRandomly } from './sources.js';
import {
  checkRandomWalk,
  checkWalks,
  compareEntries,
  entriesArb,
  iteratorContract,
  walkOpArb,
  type Entry,
} from './iterator-contract.js';

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
