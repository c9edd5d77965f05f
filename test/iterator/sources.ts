/**
 * Test sources of internal-key entries in each real form: a memtable (filled in random order),
 * a block (random restart interval, wrapped as an InternalIterator), the array reference, and
 * random mixes of them under a merging iterator.
 */
import { expect } from 'vitest';
import type { KeyProbes } from '../../src/filter/key-probes.js';
import { bytewiseInternalComparator } from '../../src/format/internal-key-comparator.js';
import { readSequence, type ValueType } from '../../src/format/internal-key.js';
import type { InternalIterator } from '../../src/iterator/internal-iterator.js';
import { MemTable } from '../../src/memtable/memtable.js';
import { Block } from '../../src/sstable/block.js';
import { BlockBuilder } from '../../src/sstable/block-builder.js';
import { MemTableInternalIterator } from '../../src/iterator/memtable-iterator.js';
import { MergingIterator } from '../../src/iterator/merging-iterator.js';
import { ArrayIterator, type Entry } from './array-iterator.js';

/** A memtable holding `entries` (distinct (user key, seq)), added in a random order. */
export function memTableOf(entries: readonly Entry[], random: () => number): MemTable {
  // With or without a Bloom filter: a filtered one answers lazy seeks (seekIfMayMatch).
  const mem = new MemTable({ bloomBits: [0, 64, 4096][Math.floor(random() * 3)]! });
  const order = entries.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  for (const i of order) {
    const { key, value } = entries[i]!;
    const n = key.length;
    mem.add(readSequence(key, n), key[n - 8] as ValueType, key.subarray(0, n - 8), value);
  }
  return mem;
}

/** A block iterator over `entries` with a random restart interval (1..16), as an InternalIterator. */
export function blockIteratorOf(entries: readonly Entry[], random: () => number): InternalIterator {
  const builder = new BlockBuilder(1 + Math.floor(random() * 16), 64);
  for (const e of entries) builder.add(e.key, e.value);
  const block = new Block(builder.finish().slice());
  const it = block.newIterator(bytewiseInternalComparator);
  return {
    valid: () => it.valid(),
    seekToFirst: () => it.seekToFirst(),
    seekToLast: () => it.seekToLast(),
    seek: (target) => it.seek(target),
    next: () => it.next(),
    prev: () => it.prev(),
    key: () => it.key(),
    value: () => it.value(),
    close: () => {},
  };
}

/**
 * An array source with `seekIfMayMatch` as a filter would answer: it seeks whenever the entry a
 * seek lands on has the target's user key, and otherwise seeks (a false positive) or refuses at
 * random. A refusal scrambles its position, so a caller that uses it unsought is caught.
 */
export class FilteredArrayIterator extends ArrayIterator {
  readonly #random: () => number;

  constructor(entries: readonly Entry[], random: () => number) {
    super(entries);
    this.#random = random;
  }

  seekIfMayMatch(target: Uint8Array, probes: KeyProbes): boolean {
    const user = target.subarray(0, target.length - 8);
    expect(Buffer.from(probes.key).equals(user)).toBe(true);
    this.seek(target);
    const lands = this.valid() && Buffer.from(this.key().subarray(0, this.key().length - 8)).equals(user);
    if (lands || this.#random() < 0.3) return true;
    if (this.#random() < 0.5) this.seekToFirst();
    else this.seekToLast();
    return false;
  }
}

/** One source of a random kind: array (plain or filtered), block or memtable adapter (all meet the contract). */
export function sourceOf(entries: readonly Entry[], random: () => number): InternalIterator {
  const kind = Math.floor(random() * 4);
  if (kind === 0) return new ArrayIterator(entries);
  if (kind === 1) return blockIteratorOf(entries, random);
  if (kind === 2) return new FilteredArrayIterator(entries, random);
  return new MemTableInternalIterator(memTableOf(entries, random));
}

/** Deals the entries at random among 1..`maxParts` parts (some may stay empty). */
export function splitRandomly(entries: readonly Entry[], random: () => number, maxParts = 6): Entry[][] {
  const n = 1 + Math.floor(random() * maxParts);
  const parts: Entry[][] = Array.from({ length: n }, () => []);
  for (const e of entries) parts[Math.floor(random() * n)]!.push(e);
  return parts;
}

/** The entries dealt among random sources under a MergingIterator: what a database reads. */
export function mergedSourceOf(entries: readonly Entry[], random: () => number): InternalIterator {
  return new MergingIterator(splitRandomly(entries, random).map((p) => sourceOf(p, random)));
}
