/**
 * ResidentFiles: images of table files kept in memory once reads keep coming back to them — what
 * LevelDB gets from mmap-ing its tables (up to 1,000 files on 64-bit), where a block read is a
 * memory access once the OS has paged the block in. Node cannot map a file, and a `pread` of one
 * block cost ~3.4 µs of a 9 µs random `getSync` in a profile (BENCHMARKS.md, session 16): a table
 * read from often takes an image as large as its file, and each data block a lookup or a seek
 * reads joins it once read from the file and verified (Table.readBlockContents; a scan's blocks,
 * read in sequence, do not); later reads decode it from memory. The
 * pages no block was written to mostly take no memory (a fresh allocation of this size is mapped
 * lazily), but the allocator may hand out reused memory, and V8 counts the whole image as external
 * memory: the budget counts whole images.
 *
 * Bounded in bytes (the database's `tableFileCacheSize`), each image counted at its file's size:
 * to admit a file, the files least recently used are let go first; a file larger than the whole
 * budget is never admitted. A table lets go of its image when it closes (evicted from the table
 * cache, or its file deleted). One per database, shared by its regions' table caches;
 * single-threaded, as the tables are.
 */

/** What a table gives the budget: its size, and a way to drop its bytes when evicted. */
export interface ResidentHolder {
  /** Called when the budget evicts the holder: it must drop its bytes and read from its file again. */
  evictResident(): void;
}

export class ResidentFiles {
  readonly capacity: number;
  #used = 0;
  /** Admitted holders and their sizes, least recently used first (Map order is insertion order). */
  readonly #holders = new Map<ResidentHolder, number>();

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.#used;
  }

  /** Files held now. */
  get files(): number {
    return this.#holders.size;
  }

  /**
   * Makes room for `size` bytes of `holder` (evicting the least recently used others) and counts
   * them. False, with nothing evicted, if `size` exceeds the whole budget or the holder is in.
   */
  admit(holder: ResidentHolder, size: number): boolean {
    if (size > this.capacity || this.#holders.has(holder)) return false;
    for (const [other, otherSize] of this.#holders) {
      if (this.#used + size <= this.capacity) break;
      this.#holders.delete(other);
      this.#used -= otherSize;
      other.evictResident();
    }
    this.#holders.set(holder, size);
    this.#used += size;
    return true;
  }

  /** Marks `holder` most recently used. */
  touch(holder: ResidentHolder): void {
    const size = this.#holders.get(holder);
    if (size === undefined) return;
    this.#holders.delete(holder);
    this.#holders.set(holder, size);
  }

  /** Forgets `holder` (it closed); no callback. */
  release(holder: ResidentHolder): void {
    const size = this.#holders.get(holder);
    if (size === undefined) return;
    this.#holders.delete(holder);
    this.#used -= size;
  }
}
