/**
 * LevelIterator: one level (L1+) of the tree as a single InternalIterator, after LevelDB's
 * two-level iterator over the "level file num iterator" (db/version_set.cc): the files of a level
 * are sorted and do not overlap, so their concatenation is sorted. Files are opened lazily, one at
 * a time: a seek binary-searches the files' largest keys and opens the one file that can hold the
 * target; stepping off a file's end closes it and opens its neighbour. So a scan of a level holds
 * at most one file open (one table-cache pin, one block) however many files the level has.
 *
 * Requires: `files` sorted by key, non-overlapping (files[i].largest < files[i + 1].smallest in
 * internal-key order; an empty file is skipped); `openFile(i)` returns a fresh iterator over file i,
 * which this iterator closes when it leaves the file or closes. Errors from `openFile` or a file
 * iterator propagate from the call that meets them; the iterator is then invalid.
 *
 * Borrowing: `key()`/`value()` are the open file iterator's, valid until this iterator moves.
 */
import type { KeyProbes } from '../filter/key-probes.js';
import type { Comparator } from '../format/comparator.js';
import { bytewiseInternalComparator } from '../format/internal-key-comparator.js';
import type { InternalIterator } from './internal-iterator.js';

/** What the level iterator needs of a file (FileMetaData has it): its key range, internal keys. */
export interface LevelFileRange {
  readonly smallest: Uint8Array;
  readonly largest: Uint8Array;
}

export class LevelIterator implements InternalIterator {
  readonly #files: readonly LevelFileRange[];
  readonly #openFile: (index: number) => InternalIterator;
  readonly #fileMayMatch: ((index: number, probes: KeyProbes) => boolean) | undefined;
  readonly #compare: Comparator['compare'];
  /** The open file's index, or -1 when none is open. */
  #index = -1;
  #file: InternalIterator | null = null;

  /**
   * @param files the level's files in key order (the array is not copied; do not mutate it while
   *   iterating — a Version's file lists are immutable).
   * @param openFile opens file `index` (e.g. through the table cache).
   * @param comparator the internal-key order; the bytewise one by default.
   * @param fileMayMatch optional: false if file `index`'s whole-table filter shows that it holds
   *   no entry of `probes`' user key, asked by `seekIfMayMatch` before it opens an iterator over
   *   the file (a seek to a key the file does not hold then makes none). With it, the file
   *   iterator's own seekIfMayMatch is told the filter was asked (`tableFilterAsked`), so give
   *   it only the filter that iterator would ask.
   */
  constructor(
    files: readonly LevelFileRange[],
    openFile: (index: number) => InternalIterator,
    comparator: Comparator = bytewiseInternalComparator,
    fileMayMatch?: (index: number, probes: KeyProbes) => boolean,
  ) {
    this.#files = files;
    this.#openFile = openFile;
    this.#fileMayMatch = fileMayMatch;
    this.#compare = comparator.compare;
  }

  valid(): boolean {
    return this.#file !== null && this.#file.valid();
  }

  seekToFirst(): void {
    if (!this.#open(0)) return;
    this.#file!.seekToFirst();
    this.#skipEmptyForward();
  }

  seekToLast(): void {
    if (!this.#open(this.#files.length - 1)) return;
    this.#file!.seekToLast();
    this.#skipEmptyBackward();
  }

  /** The first entry ≥ target: in the first file whose largest key is ≥ target. */
  seek(target: Uint8Array): void {
    if (!this.#open(this.#findFile(target))) return;
    this.#file!.seek(target);
    this.#skipEmptyForward();
  }

  /**
   * See InternalIterator.seekIfMayMatch: a seek lands in the first file whose largest key is ≥
   * target (an entry of it), so that file's filters decide; sought (invalid) if there is none.
   */
  seekIfMayMatch(target: Uint8Array, probes: KeyProbes): boolean {
    const index = this.#findFile(target);
    // The entry the seek would land on, if not of target's user key, is above it: the file's
    // filter may rule the key out before an iterator over the file is made.
    const asked = this.#fileMayMatch !== undefined;
    if (index < this.#files.length && asked && !this.#fileMayMatch(index, probes)) return false;
    if (!this.#open(index)) return true;
    const file = this.#file!;
    if (file.seekIfMayMatch === undefined) file.seek(target);
    else if (!file.seekIfMayMatch(target, probes, asked)) return false;
    this.#skipEmptyForward();
    return true;
  }

  next(): void {
    this.#file!.next();
    this.#skipEmptyForward();
  }

  prev(): void {
    this.#file!.prev();
    this.#skipEmptyBackward();
  }

  /** Requires `valid()`; borrowed until the next move. */
  key(): Uint8Array {
    return this.#file!.key();
  }

  /** Requires `valid()`; borrowed until the next move. */
  value(): Uint8Array {
    return this.#file!.value();
  }

  /** See InternalIterator.park: closes the open file; the next seek opens the one it needs. */
  park(): void {
    this.#closeFile();
  }

  /** Closes the open file, if any. Idempotent. */
  close(): void {
    this.#closeFile();
  }

  /** The index of the first file whose largest key is ≥ target (files.length if none). */
  #findFile(target: Uint8Array): number {
    const files = this.#files;
    const compare = this.#compare;
    let lo = 0;
    let hi = files.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const largest = files[mid]!.largest;
      if (compare(largest, 0, largest.length, target, 0, target.length) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Makes file `index` the open one (keeping it if it already is); out of range closes the open
   * file and returns false (the iterator is then invalid).
   */
  #open(index: number): boolean {
    if (index < 0 || index >= this.#files.length) {
      this.#closeFile();
      return false;
    }
    if (index === this.#index && this.#file !== null) return true;
    this.#closeFile();
    this.#file = this.#openFile(index);
    this.#index = index;
    return true;
  }

  #closeFile(): void {
    const file = this.#file;
    this.#file = null;
    this.#index = -1;
    if (file !== null) file.close();
  }

  /** While the open file is exhausted, moves to the start of the next (a file may be empty). */
  #skipEmptyForward(): void {
    while (this.#file !== null && !this.#file.valid()) {
      if (!this.#open(this.#index + 1)) return;
      this.#file!.seekToFirst();
    }
  }

  /** While the open file is exhausted, moves to the end of the previous one. */
  #skipEmptyBackward(): void {
    while (this.#file !== null && !this.#file.valid()) {
      if (!this.#open(this.#index - 1)) return;
      this.#file!.seekToLast();
    }
  }
}
