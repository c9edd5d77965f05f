/**
 * EntryRun: the entries of many write batches gathered in one buffer, for a memtable to take in
 * key order in one pass (`MemTable.addRun`) instead of batch by batch. A WAL replay fills one:
 * inserted batch by batch, each batch's keys land all over a growing skiplist and every insert
 * pays a search; sorted first, the whole replay is an append per entry.
 *
 * Entries keep their own sequence numbers, so batches of any order (several WALs, records of any
 * size) gather into one run. The bytes are copied: a batch's record may be a reader's reused
 * buffer.
 */
import { BATCH_ENTRY_FIELDS, type BatchEntries } from '../wal/write-batch.js';

/**
 * Fields per entry in `fields`: type, key offset, key length, value offset, value length — the
 * layout of `BatchEntries.fields`, so one sort (MemTable) serves a batch and a run.
 */
export const RUN_FIELDS = BATCH_ENTRY_FIELDS;
/** A skiplist node's bytes beyond its key, trailer and value: header, ~4/3 next pointers, padding. */
const NODE_OVERHEAD = 12 + 6 + 2;
const TRAILER = 8;

export class EntryRun {
  /** The gathered batches' bytes; entries index into it. */
  bytes = new Uint8Array(64 * 1024);
  /** Per entry, RUN_FIELDS int32s (see RUN_FIELDS). */
  fields = new Int32Array(RUN_FIELDS * 1024);
  /** Per entry, its sequence number. */
  seqs = new Float64Array(1024);
  count = 0;
  #used = 0;
  #nodeBytes = 0;

  /** What the entries will take in a memtable, about (its `approximateMemoryUsage` grows by this). */
  get nodeBytes(): number {
    return this.#nodeBytes;
  }

  /**
   * Sizes the byte buffer for `bytes` of batches in all (a replay passes its WALs' sizes, which
   * bound their records'), so it is allocated once, not grown by doubling.
   */
  reserve(bytes: number): void {
    if (bytes <= this.bytes.length) return;
    const grown = new Uint8Array(bytes);
    grown.set(this.bytes.subarray(0, this.#used));
    this.bytes = grown;
  }

  /** Adds every entry of a decoded batch (`rep` its encoding), entry i at sequence `seq + i`. */
  addBatch(rep: Uint8Array, entries: BatchEntries, seq: number): void {
    const n = entries.count;
    if (n === 0) return;
    const base = this.#used;
    if (base + rep.length > this.bytes.length) {
      const grown = new Uint8Array(Math.max(base + rep.length, 2 * this.bytes.length));
      grown.set(this.bytes.subarray(0, base));
      this.bytes = grown;
    }
    this.bytes.set(rep, base);
    this.#used = base + rep.length;
    const at = this.count;
    if (at + n > this.seqs.length) {
      const size = Math.max(at + n, 2 * this.seqs.length);
      const fields = new Int32Array(RUN_FIELDS * size);
      fields.set(this.fields.subarray(0, RUN_FIELDS * at));
      this.fields = fields;
      const seqs = new Float64Array(size);
      seqs.set(this.seqs.subarray(0, at));
      this.seqs = seqs;
    }
    const src = entries.fields;
    const dst = this.fields;
    const seqs = this.seqs;
    let nodeBytes = 0;
    for (let i = 0; i < n; i++) {
      const s = i * RUN_FIELDS;
      const d = (at + i) * RUN_FIELDS;
      dst[d] = src[s]!;
      dst[d + 1] = src[s + 1]! + base;
      dst[d + 2] = src[s + 2]!;
      dst[d + 3] = src[s + 3]! + base;
      dst[d + 4] = src[s + 4]!;
      seqs[at + i] = seq + i;
      nodeBytes += src[s + 2]! + src[s + 4]! + TRAILER + NODE_OVERHEAD;
    }
    this.count = at + n;
    this.#nodeBytes += nodeBytes;
  }

  /** Forgets every entry (the buffers are kept for the next run). */
  clear(): void {
    this.count = 0;
    this.#used = 0;
    this.#nodeBytes = 0;
  }
}
