import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyProbes } from '../../src/filter/key-probes.js';
import { bytewiseInternalComparator } from '../../src/format/internal-key-comparator.js';
import type { InternalIterator } from '../../src/iterator/internal-iterator.js';
import { LevelIterator, type LevelFileRange } from '../../src/iterator/level-iterator.js';
import { MergingIterator } from '../../src/iterator/merging-iterator.js';
import { rng } from '../support/seed.js';
import { ArrayIterator } from './array-iterator.js';
import { blockIteratorOf } from './sources.js';
import {
  checkRandomWalk,
  checkSeeks,
  checkWalks,
  entriesArb,
  iteratorContract,
  lowerBound,
  resolveTarget,
  targetArb,
  walkOpArb,
  type Entry,
} from './iterator-contract.js';

/** Cuts the entries into consecutive non-empty files at random points. */
function cutIntoFiles(entries: readonly Entry[], random: () => number): Entry[][] {
  const files: Entry[][] = [];
  let current: Entry[] = [];
  for (const e of entries) {
    current.push(e);
    if (random() < 0.3) {
      files.push(current);
      current = [];
    }
  }
  if (current.length > 0) files.push(current);
  return files;
}

const rangeOf = (f: readonly Entry[]): LevelFileRange => ({ smallest: f[0]!.key, largest: f[f.length - 1]!.key });

/** Opens files as block iterators and keeps count of what is open. */
class Tracker {
  open = 0;
  maxOpen = 0;
  opened: number[] = [];
  constructor(readonly files: readonly Entry[][], readonly random: () => number) {}
  openFile = (i: number): InternalIterator => {
    const inner = blockIteratorOf(this.files[i]!, this.random);
    this.open++;
    this.opened.push(i);
    this.maxOpen = Math.max(this.maxOpen, this.open);
    let closed = false;
    return {
      ...inner,
      close: () => {
        if (!closed) this.open--;
        closed = true;
      },
    };
  };
}

iteratorContract('LevelIterator', (entries, random) => {
  const files = cutIntoFiles(entries, random);
  return new LevelIterator(files.map(rangeOf), new Tracker(files, random).openFile);
});

describe('LevelIterator', () => {
  it('keeps at most one file open, closes it on close, and a seek opens only the file that holds the target', () => {
    fc.assert(
      fc.property(entriesArb(60), fc.integer(), fc.array(walkOpArb, { maxLength: 50, size: 'max' }), fc.array(targetArb, { maxLength: 10, size: 'max' }), (entries, seed, ops, targets) => {
        const random = rng(seed);
        const files = cutIntoFiles(entries, random);
        const tracker = new Tracker(files, random);
        const it = new LevelIterator(files.map(rangeOf), tracker.openFile);
        checkRandomWalk(it, entries, ops);
        expect(tracker.maxOpen).toBeLessThanOrEqual(1);
        for (const r of targets) {
          const target = resolveTarget(r, entries);
          tracker.opened = [];
          it.seek(target);
          const index = lowerBound(entries, target);
          if (index < entries.length) {
            // The file holding the model's answer is the one open; at most one other was opened
            // (none in this layout: no file is empty).
            const holder = files.findIndex((f) => f.includes(entries[index]!));
            expect(tracker.opened.every((i) => i === holder)).toBe(true);
            expect(tracker.opened.length).toBeLessThanOrEqual(1);
          } else {
            expect(it.valid()).toBe(false);
            expect(tracker.open).toBe(0); // past the end: nothing left open
          }
        }
        it.close();
        it.close();
        expect(tracker.open).toBe(0);
      }),
      { numRuns: 100 },
    );
  });

  it('skips empty files in both directions', () => {
    fc.assert(
      fc.property(entriesArb(30), fc.integer(), (es, seed) => {
        const random = rng(seed);
        const files = cutIntoFiles(es, random);
        // Insert empty files between real ones (ranged at the previous file's last key).
        const withEmpty: Entry[][] = [];
        const ranges: LevelFileRange[] = [];
        for (const f of files) {
          if (random() < 0.5 && withEmpty.length > 0) {
            const prev = withEmpty[withEmpty.length - 1]!;
            const k = prev[prev.length - 1]?.key ?? f[0]!.key;
            withEmpty.push([]);
            ranges.push({ smallest: k, largest: k });
          }
          withEmpty.push(f);
          ranges.push(rangeOf(f));
        }
        const it = new LevelIterator(ranges, (i) => new ArrayIterator(withEmpty[i]!));
        const forward: Entry[] = [];
        for (it.seekToFirst(); it.valid(); it.next()) forward.push({ key: it.key(), value: it.value() });
        expect(forward).toEqual(es);
        const backward: Entry[] = [];
        for (it.seekToLast(); it.valid(); it.prev()) backward.push({ key: it.key(), value: it.value() });
        expect(backward).toEqual([...es].reverse());
      }),
    );
  });

  it('with a file filter: a seek the filter rules out opens no file; merged, every walk and seek matches the model', () => {
    fc.assert(
      fc.property(
        entriesArb(60),
        fc.integer(),
        fc.array(walkOpArb, { maxLength: 40, size: 'max' }),
        fc.array(targetArb, { maxLength: 10, size: 'max' }),
        (entries, seed, ops, recipes) => {
          const random = rng(seed);
          // Two levels (every other entry in each), each cut into files.
          const levels = [entries.filter((_, i) => i % 2 === 0), entries.filter((_, i) => i % 2 === 1)].map((es) => cutIntoFiles(es, random));
          const userOf = (k: Uint8Array): string => Buffer.from(k.subarray(0, k.length - 8)).toString('hex');
          const trackers = levels.map((files) => new Tracker(files, random));
          // A filter: never false for a user key the file holds, false or (a false positive) true otherwise.
          const mayMatch = (files: Entry[][]) => (i: number, probes: KeyProbes): boolean =>
            files[i]!.some((e) => userOf(e.key) === Buffer.from(probes.key).toString('hex')) || random() < 0.3;
          const make = (): MergingIterator =>
            new MergingIterator(levels.map((files, l) => new LevelIterator(files.map(rangeOf), trackers[l]!.openFile, bytewiseInternalComparator, mayMatch(files))));
          checkWalks(make(), entries);
          checkRandomWalk(make(), entries, ops);
          checkSeeks(make(), entries, recipes);
          // Alone: a seek the filter rules out returns false having opened nothing.
          for (const [l, files] of levels.entries()) {
            if (files.length === 0) continue;
            const tracker = trackers[l]!;
            const it = new LevelIterator(files.map(rangeOf), tracker.openFile, bytewiseInternalComparator, () => false);
            const probes = new KeyProbes();
            const target = files[0]![0]!.key;
            probes.reset(target.subarray(0, target.length - 8));
            tracker.opened = [];
            expect(it.seekIfMayMatch(target, probes)).toBe(false);
            expect(tracker.opened).toEqual([]);
            it.seek(target); // sought before any other use, as the contract asks
            expect(it.valid() && Buffer.from(it.key()).equals(Buffer.from(target))).toBe(true);
            it.close();
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it('park closes the open file (directly or through a merge); the next seek opens the one it needs', () => {
    fc.assert(
      fc.property(entriesArb(40), fc.integer(), fc.array(targetArb, { minLength: 1, maxLength: 5 }), (entries, seed, recipes) => {
        const random = rng(seed);
        const files = cutIntoFiles(entries, random);
        const tracker = new Tracker(files, random);
        const level = new LevelIterator(files.map(rangeOf), tracker.openFile);
        const merged = new MergingIterator([level]);
        for (const r of recipes) {
          const target = resolveTarget(r, entries);
          merged.seek(target);
          const index = lowerBound(entries, target);
          expect(merged.valid()).toBe(index < entries.length);
          if (index < entries.length) expect(Buffer.from(merged.key()).equals(Buffer.from(entries[index]!.key))).toBe(true);
          merged.park();
          expect(merged.valid()).toBe(false);
          expect(tracker.open).toBe(0);
        }
        merged.close();
        expect(tracker.open).toBe(0);
      }),
      { numRuns: 100 },
    );
  });

  it('an error from openFile propagates and leaves the iterator invalid', () => {
    const files = [[{ key: Uint8Array.of(1, 1, 0, 0, 0, 0, 0, 0, 0), value: Uint8Array.of() }]];
    const it = new LevelIterator(files.map(rangeOf), () => {
      throw new Error('cannot open');
    });
    expect(() => it.seekToFirst()).toThrow('cannot open');
    expect(it.valid()).toBe(false);
    it.close();
  });
});
