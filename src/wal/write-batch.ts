/**
 * WriteBatch: an ordered group of puts and deletes applied atomically, in LevelDB's byte format
 * (db/write_batch.cc) — the exact bytes a WAL record holds:
 *
 *   fixed64 sequence | fixed32 count | record*
 *   record := 0x01 varint32 keyLen key varint32 valueLen value   (put)
 *           | 0x00 varint32 keyLen key                            (delete)
 *
 * The batch's entries take sequence numbers `sequence`, `sequence + 1`, … in order, so a later
 * entry for a key wins over an earlier one in the same batch.
 *
 * A batch owns a growable buffer; `contents()` returns a view of it, valid until the batch is
 * changed. Not thread-safe.
 */
import { corruption } from '../errors.js';
import { getFixed32, getFixed64, putFixed32, putFixed64 } from '../format/coding.js';
import { ValueType } from '../format/internal-key.js';
import { ByteReader, putVarint32, varint32Length } from '../format/varint.js';

/** Persisted: fixed64 sequence + fixed32 count. */
export const BATCH_HEADER_SIZE = 12;

export class WriteBatch {
  #rep = new Uint8Array(256);
  #size = BATCH_HEADER_SIZE;

  /** Number of entries. */
  get count(): number {
    return getFixed32(this.#rep, 8);
  }

  /** Encoded size in bytes, header included (what a WAL record of it holds). */
  get byteLength(): number {
    return this.#size;
  }

  /** The sequence number of the first entry (set by the database when it commits the batch). */
  get sequence(): number {
    return getFixed64(this.#rep, 0);
  }

  setSequence(seq: number): void {
    putFixed64(this.#rep, 0, seq);
  }

  #reserve(bytes: number): Uint8Array {
    if (this.#size + bytes > this.#rep.length) {
      let size = this.#rep.length * 2;
      while (size < this.#size + bytes) size *= 2;
      const grown = new Uint8Array(size);
      grown.set(this.#rep.subarray(0, this.#size));
      this.#rep = grown;
    }
    return this.#rep;
  }

  /**
   * Makes room for `bytes` more encoded bytes at once (a caller that knows a batch's size): the
   * buffer grows to exactly that, not to the next doubling.
   */
  reserve(bytes: number): this {
    const need = this.#size + bytes;
    if (need > this.#rep.length) {
      const grown = new Uint8Array(need);
      grown.set(this.#rep.subarray(0, this.#size));
      this.#rep = grown;
    }
    return this;
  }

  #bumpCount(by: number): void {
    putFixed32(this.#rep, 8, this.count + by);
  }

  put(key: Uint8Array, value: Uint8Array): this {
    const rep = this.#reserve(1 + varint32Length(key.length) + key.length + varint32Length(value.length) + value.length);
    let p = this.#size;
    rep[p++] = ValueType.VALUE;
    p = putVarint32(rep, p, key.length);
    rep.set(key, p);
    p = putVarint32(rep, p + key.length, value.length);
    rep.set(value, p);
    this.#size = p + value.length;
    this.#bumpCount(1);
    return this;
  }

  del(key: Uint8Array): this {
    const rep = this.#reserve(1 + varint32Length(key.length) + key.length);
    let p = this.#size;
    rep[p++] = ValueType.DELETION;
    p = putVarint32(rep, p, key.length);
    rep.set(key, p);
    this.#size = p + key.length;
    this.#bumpCount(1);
    return this;
  }

  /** Appends every entry of `other` (its sequence is ignored). */
  append(other: WriteBatch): this {
    const body = other.contents().subarray(BATCH_HEADER_SIZE);
    this.#reserve(body.length).set(body, this.#size);
    this.#size += body.length;
    this.#bumpCount(other.count);
    return this;
  }

  /** Removes every entry and resets the sequence to 0; keeps the buffer. */
  clear(): void {
    this.#rep.fill(0, 0, BATCH_HEADER_SIZE);
    this.#size = BATCH_HEADER_SIZE;
  }

  /** The encoded batch: a view valid until the batch changes. */
  contents(): Uint8Array {
    return this.#rep.subarray(0, this.#size);
  }

  /**
   * A batch holding a copy of `bytes` (e.g. a WAL record). Checks the header is present; the
   * entries are checked when read (`forEachBatchEntry`).
   */
  static fromContents(bytes: Uint8Array, file?: string, offset?: number): WriteBatch {
    if (bytes.length < BATCH_HEADER_SIZE) {
      throw corruption(`write batch too small (${bytes.length} bytes)`, { file, offset });
    }
    const batch = new WriteBatch();
    batch.#rep = bytes.slice();
    batch.#size = bytes.length;
    return batch;
  }
}

/** Receives a batch's entries: `value` is empty for a deletion. Views are valid during the call. */
export type BatchVisitor = (type: ValueType, key: Uint8Array, value: Uint8Array) => void;

const EMPTY = new Uint8Array(0);
const reader = new ByteReader(EMPTY);

/**
 * Decodes the batch in `rep` (e.g. a WAL record) and calls `visit` for each entry, in order.
 * Returns the number of entries. Throws CORRUPTION (naming `file` and `offset`, the record's file
 * offset) on a short header, a bad tag, a length past the end, or a count that does not match the
 * header — before `visit` sees any entry, so a damaged batch is never half-applied.
 */
export function forEachBatchEntry(rep: Uint8Array, visit: BatchVisitor, file?: string, offset = 0): number {
  const count = checkBatch(rep, file, offset);
  reader.reset(rep, BATCH_HEADER_SIZE, rep.length, file, offset);
  for (let i = 0; i < count; i++) {
    const type = reader.byte() as ValueType;
    const keyLen = reader.varint32();
    const key = rep.subarray(reader.pos, reader.pos + keyLen);
    reader.pos += keyLen;
    if (type === ValueType.VALUE) {
      const valueLen = reader.varint32();
      visit(type, key, rep.subarray(reader.pos, reader.pos + valueLen));
      reader.pos += valueLen;
    } else {
      visit(type, key, EMPTY);
    }
  }
  return count;
}

/** The batch's sequence number (header), after checking the header is present. */
export function batchSequence(rep: Uint8Array, file?: string, offset = 0): number {
  if (rep.length < BATCH_HEADER_SIZE) throw corruption('write batch too small', { file, offset });
  return getFixed64(rep, 0);
}

/** Validates every entry of a batch without visiting; returns the entry count. */
export function checkBatch(rep: Uint8Array, file?: string, offset = 0): number {
  if (rep.length < BATCH_HEADER_SIZE) throw corruption('write batch too small', { file, offset });
  const count = getFixed32(rep, 8);
  const r = new ByteReader(rep, BATCH_HEADER_SIZE, rep.length, file, offset);
  let found = 0;
  while (r.remaining > 0) {
    const type = r.byte();
    if (type !== ValueType.VALUE && type !== ValueType.DELETION) r.fail(`unknown write batch tag ${type}`, r.pos - 1);
    const keyLen = r.varint32();
    if (keyLen > r.remaining) r.fail('write batch key runs past the record');
    r.pos += keyLen;
    if (type === ValueType.VALUE) {
      const valueLen = r.varint32();
      if (valueLen > r.remaining) r.fail('write batch value runs past the record');
      r.pos += valueLen;
    }
    found++;
  }
  if (found !== count) throw corruption(`write batch has ${found} entries, header says ${count}`, { file, offset });
  return count;
}

/** Fields per entry in `BatchEntries.fields`. */
export const BATCH_ENTRY_FIELDS = 5;

/**
 * A batch's entries as offsets into its encoding, for applying it without a view or an object
 * per entry. Reusable: `decode` overwrites what the previous batch left. Entry i's fields are
 * `fields[5i … 5i + 4]`: type, key offset, key length, value offset, value length (0 for a
 * deletion).
 */
export class BatchEntries {
  count = 0;
  fields = new Int32Array(BATCH_ENTRY_FIELDS * 64);

  /**
   * Decodes `rep`, checking it as it goes with checkBatch's rules and messages; CORRUPTION before
   * the caller applies anything (the entries are only recorded here). One pass: a batch is
   * decoded on every write. Returns the number of entries.
   */
  decode(rep: Uint8Array, file?: string, offset = 0): number {
    if (rep.length < BATCH_HEADER_SIZE) throw corruption('write batch too small', { file, offset });
    const declared = getFixed32(rep, 8);
    reader.reset(rep, BATCH_HEADER_SIZE, rep.length, file, offset);
    let fields = this.fields;
    let found = 0;
    for (let f = 0; reader.remaining > 0; found++, f += BATCH_ENTRY_FIELDS) {
      const type = reader.byte();
      if (type !== ValueType.VALUE && type !== ValueType.DELETION) reader.fail(`unknown write batch tag ${type}`, reader.pos - 1);
      const keyLen = reader.varint32();
      if (keyLen > reader.remaining) reader.fail('write batch key runs past the record');
      // Grown by what is present, never by the header's count: an entry takes 2 bytes or more.
      if (f + BATCH_ENTRY_FIELDS > fields.length) {
        const grown = new Int32Array(fields.length * 2);
        grown.set(fields);
        fields = this.fields = grown;
      }
      fields[f] = type;
      fields[f + 1] = reader.pos;
      fields[f + 2] = keyLen;
      reader.pos += keyLen;
      let valueLen = 0;
      if (type === ValueType.VALUE) {
        valueLen = reader.varint32();
        if (valueLen > reader.remaining) reader.fail('write batch value runs past the record');
      }
      fields[f + 3] = reader.pos;
      fields[f + 4] = valueLen;
      reader.pos += valueLen;
    }
    if (found !== declared) throw corruption(`write batch has ${found} entries, header says ${declared}`, { file, offset });
    this.count = found;
    return found;
  }
}
