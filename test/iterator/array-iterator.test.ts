/**
 * The reference ArrayIterator against the contract, and proof that the contract can fail: small
 * deliberate bugs in an otherwise correct iterator are caught by the checks.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { InternalIterator } from '../../src/iterator/internal-iterator.js';
import { rng } from '../support/seed.js';
import { ArrayIterator } from './array-iterator.js';
import {
  checkRandomWalk,
  checkSeeks,
  checkWalks,
  entriesArb,
  iteratorContract,
  targetArb,
  walkOpArb,
  type Entry,
} from './iterator-contract.js';

iteratorContract('ArrayIterator (reference)', (entries) => new ArrayIterator(entries));

/** Wraps a correct iterator, breaking one behaviour. */
function broken(inner: InternalIterator, bug: 'prev-skips' | 'seek-past-equal' | 'stale-key'): InternalIterator {
  let staleKey: Uint8Array | null = null;
  return {
    valid: () => inner.valid(),
    seekToFirst: () => inner.seekToFirst(),
    seekToLast: () => inner.seekToLast(),
    seek: (t) => {
      inner.seek(t);
      if (bug === 'seek-past-equal' && inner.valid() && Buffer.from(inner.key()).equals(t)) inner.next();
    },
    next: () => inner.next(),
    prev: () => {
      inner.prev();
      if (bug === 'prev-skips' && inner.valid()) inner.prev();
    },
    key: () => {
      if (bug === 'stale-key') return (staleKey ??= inner.key());
      return inner.key();
    },
    value: () => inner.value(),
    close: () => inner.close(),
  };
}

describe('the contract checks catch broken iterators', () => {
  const cases = ['prev-skips', 'seek-past-equal', 'stale-key'] as const;
  for (const bug of cases) {
    it(`catches ${bug}`, () => {
      let caught = 0;
      fc.assert(
        fc.property(entriesArb(20), fc.array(targetArb, { maxLength: 10, size: 'max' }), fc.array(walkOpArb, { maxLength: 30, size: 'max' }), (entries: Entry[], recipes, ops) => {
          const make = (): InternalIterator => broken(new ArrayIterator(entries), bug);
          try {
            checkWalks(make(), entries);
            checkSeeks(make(), entries, recipes);
            checkRandomWalk(make(), entries, ops);
          } catch {
            caught++;
          }
        }),
        { numRuns: 50 },
      );
      expect(caught).toBeGreaterThan(10);
    });
  }

  it('rng is deterministic (splits are replayable)', () => {
    const a = rng(42);
    const b = rng(42);
    expect([a(), a(), a()]).toEqual([b(), b(), b()]);
  });
});
