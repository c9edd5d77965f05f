/**
 * A reference InternalIterator over a sorted array of entries, for tests: the simplest thing that
 * meets the contract, used as a child of merging and level iterators and checked by the contract
 * suite itself. Counts its opens/closes through an optional tracker.
 */
import { compareInternalKeys } from '../../src/format/internal-key.js';
import type { InternalIterator } from '../../src/iterator/internal-iterator.js';

export interface Entry {
  /** An internal key. */
  key: Uint8Array;
  value: Uint8Array;
}

export class ArrayIterator implements InternalIterator {
  #pos = -1;
  closed = 0;

  /** `entries` must be sorted by internal key; not copied. */
  constructor(readonly entries: readonly Entry[]) {}

  valid(): boolean {
    return this.#pos >= 0 && this.#pos < this.entries.length;
  }
  seekToFirst(): void {
    this.#pos = 0;
  }
  seekToLast(): void {
    this.#pos = this.entries.length - 1;
  }
  seek(target: Uint8Array): void {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const k = this.entries[mid]!.key;
      if (compareInternalKeys(k, 0, k.length, target, 0, target.length) < 0) lo = mid + 1;
      else hi = mid;
    }
    this.#pos = lo;
  }
  next(): void {
    this.#require();
    this.#pos++;
  }
  prev(): void {
    this.#require();
    this.#pos--;
  }
  key(): Uint8Array {
    this.#require();
    return this.entries[this.#pos]!.key;
  }
  value(): Uint8Array {
    this.#require();
    return this.entries[this.#pos]!.value;
  }
  close(): void {
    this.closed++;
    this.#pos = -1;
  }
  #require(): void {
    if (!this.valid()) throw new Error('ArrayIterator used while not valid');
  }
}
