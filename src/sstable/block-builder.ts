/**
 * Builds one block of a table (data, index or metaindex) in LevelDB's block format
 * (table/block_builder.cc; byte layout in docs/format and DESIGN.md "On-disk formats"):
 *
 *   entry*  restart[numRestarts] (fixed32 each)  numRestarts (fixed32)
 *   entry = varint32 shared ‖ varint32 nonShared ‖ varint32 valueLength ‖ key[shared..] ‖ value
 *
 * Keys are prefix-compressed against the previous key, except every `restartInterval`-th entry,
 * a "restart point" whose full key is stored and whose offset goes into the restart array, so a
 * reader can binary-search restart points and decode forward from any of them.
 *
 * Legal call order: `add`* → `finish` → (`reset` → `add`* → `finish`)*, where `add` is `add` or
 * `addSlices` throughout a builder's life, or `addSlicesSharing` throughout (its caller keeps the
 * last key and says how much of it each key shares). Keys must be added in the block's comparator
 * order; the builder does not compare (the table builder checks the order once per entry). Bytes
 * go into one internal buffer that grows by doubling and is reused across `reset`, so adding
 * allocates nothing in the steady state.
 */
import { invalidArgument } from '../errors.js';
import { commonPrefixLength, copyBytes, replaceAfterPrefix } from '../format/bytes.js';
import { putFixed32 } from '../format/coding.js';
import { MAX_VARINT32_LENGTH, putVarint32 } from '../format/varint.js';

/** LevelDB's default: a full key every 16 entries in data blocks (index blocks use 1). */
export const DEFAULT_BLOCK_RESTART_INTERVAL = 16;

export class BlockBuilder {
  readonly restartInterval: number;
  private buf: Uint8Array;
  private pos = 0;
  private readonly restarts: number[] = [0];
  /** Entries since the last restart point. */
  private counter = 0;
  private entries = 0;
  private finished = false;
  private lastKey: Uint8Array;
  private lastKeyLen = 0;

  /**
   * @param restartInterval entries between restart points, an integer >= 1 (16 for data blocks,
   *   1 for index blocks so every index key is stored whole).
   * @param initialCapacity starting size of the internal buffer (it grows as needed).
   */
  constructor(restartInterval: number = DEFAULT_BLOCK_RESTART_INTERVAL, initialCapacity = 4096) {
    if (!Number.isInteger(restartInterval) || restartInterval < 1) {
      throw invalidArgument(`block restart interval must be an integer >= 1, got ${restartInterval}`);
    }
    this.restartInterval = restartInterval;
    this.buf = new Uint8Array(Math.max(64, initialCapacity));
    this.lastKey = new Uint8Array(64);
  }

  /** Appends an entry; `key` must sort after the previous key. The bytes are copied. */
  add(key: Uint8Array, value: Uint8Array): void {
    this.addSlices(key, 0, key.length, value, 0, value.length);
  }

  /**
   * `add` for `key[keyStart, keyEnd)` and `value[valueStart, valueEnd)`, without views: the
   * builder measures the prefix each key shares with its copy of the last one (none at a restart
   * point), then lays the entry out as addSlicesSharing does.
   */
  addSlices(
    key: Uint8Array,
    keyStart: number,
    keyEnd: number,
    value: Uint8Array,
    valueStart: number,
    valueEnd: number,
  ): void {
    const shared = this.counter < this.restartInterval ? commonPrefixLength(this.lastKey, this.lastKeyLen, key, keyStart, keyEnd) : 0;
    this.addSlicesSharing(shared, key, keyStart, keyEnd, value, valueStart, valueEnd);
    this.lastKey = replaceAfterPrefix(this.lastKey, shared, key, keyStart, keyEnd);
    this.lastKeyLen = keyEnd - keyStart;
  }

  /**
   * `addSlices` for a caller that keeps the previous key itself (TableBuilder): `shared` is how
   * many leading bytes `key[keyStart, keyEnd)` has in common with the key added just before it
   * (to this block or, before a `reset`, to the last one), at most its length. The builder keeps
   * no copy of the key, so one builder is fed either this way or by `add`/`addSlices`, not both.
   */
  addSlicesSharing(
    shared: number,
    key: Uint8Array,
    keyStart: number,
    keyEnd: number,
    value: Uint8Array,
    valueStart: number,
    valueEnd: number,
  ): void {
    if (this.finished) throw invalidArgument('BlockBuilder.add after finish (call reset first)');
    const keyLen = keyEnd - keyStart;
    if (!(shared >= 0 && shared <= keyLen)) {
      throw invalidArgument(`BlockBuilder.addSlicesSharing: ${shared} shared bytes for a key of ${keyLen}`);
    }
    if (this.entries === 0) {
      shared = 0;
    } else if (this.counter >= this.restartInterval) {
      this.restarts.push(this.pos);
      this.counter = 0;
      shared = 0;
    }
    const nonShared = keyLen - shared;
    const valueLen = valueEnd - valueStart;
    this.ensureCapacity(3 * MAX_VARINT32_LENGTH + nonShared + valueLen);
    const buf = this.buf;
    let p = this.pos;
    if ((shared | nonShared | valueLen) < 0x80) {
      buf[p] = shared;
      buf[p + 1] = nonShared;
      buf[p + 2] = valueLen;
      p += 3;
    } else {
      p = putVarint32(buf, p, shared);
      p = putVarint32(buf, p, nonShared);
      p = putVarint32(buf, p, valueLen);
    }
    copyBytes(key, keyStart + shared, keyEnd, buf, p);
    p += nonShared;
    copyBytes(value, valueStart, valueEnd, buf, p);
    this.pos = p + valueLen;
    this.counter++;
    this.entries++;
  }

  /**
   * Appends the restart array and its count and returns the finished block: a view of the
   * internal buffer, borrowed until `reset` (copy it, or write it out, before reusing the
   * builder). No `add` until `reset`.
   */
  finish(): Uint8Array {
    if (!this.finished) {
      const restarts = this.restarts;
      this.ensureCapacity(4 * restarts.length + 4);
      let p = this.pos;
      for (let i = 0; i < restarts.length; i++) p = putFixed32(this.buf, p, restarts[i]!);
      this.pos = putFixed32(this.buf, p, restarts.length);
      this.finished = true;
    }
    return this.buf.subarray(0, this.pos);
  }

  /** Forgets all entries (keeps the buffers) so the builder can make the next block. */
  reset(): void {
    this.pos = 0;
    this.restarts.length = 1;
    this.restarts[0] = 0;
    this.counter = 0;
    this.entries = 0;
    this.finished = false;
    this.lastKeyLen = 0;
  }

  /** The size `finish` would return now (bytes of the block, before compression and trailer). */
  currentSizeEstimate(): number {
    return this.finished ? this.pos : this.pos + 4 * this.restarts.length + 4;
  }

  /** True if no entry was added since construction or `reset`. */
  get empty(): boolean {
    return this.entries === 0;
  }

  /** Entries added since construction or `reset`. */
  get numEntries(): number {
    return this.entries;
  }

  private ensureCapacity(extra: number): void {
    const needed = this.pos + extra;
    if (needed <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(needed, 2 * this.buf.length));
    grown.set(this.buf.subarray(0, this.pos));
    this.buf = grown;
  }
}
