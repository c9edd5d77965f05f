/**
 * LogWriter: appends records to a log file in LevelDB's format (see log-format.ts).
 *
 * Each `addRecord` frames the record's fragments in a reused buffer and hands them to the file in
 * one `append` call, so a record costs one system call however many fragments it has. Durability
 * is the caller's: `sync` / `syncAsync` after the records that must survive. Not thread-safe;
 * owned by the database's write path (or the MANIFEST writer).
 */
import { putFixed32 } from '../format/coding.js';
import { crc32c, crc32cExtendByte, maskCrc } from '../format/crc32c.js';
import type { WritableFile } from '../fs/file-system.js';
import { LOG_BLOCK_SIZE, LOG_HEADER_SIZE, RecordType } from './log-format.js';

/** The CRC of each type byte alone, which every fragment's CRC extends. */
const TYPE_CRC = [0, 1, 2, 3, 4].map((t) => crc32cExtendByte(0, t));

export class LogWriter {
  /** Offset within the current block. */
  #blockOffset: number;
  #frame = new Uint8Array(LOG_BLOCK_SIZE);
  #syncsInFlight = 0;
  #closeWanted = false;
  /** The file's size when the last finished sync began: the bytes known to be durable. */
  #syncedSize = 0;

  /**
   * Appends to `file`, which already holds `file.size` bytes of log (0 for a new log); those are
   * not taken to be synced.
   */
  constructor(readonly file: WritableFile) {
    this.#blockOffset = file.size % LOG_BLOCK_SIZE;
  }

  /** Bytes in the file so far. */
  get size(): number {
    return this.file.size;
  }

  /** True if bytes were appended after the last finished sync began. */
  get unsynced(): boolean {
    return this.file.size > this.#syncedSize;
  }

  #ensureFrame(bytes: number): Uint8Array {
    if (this.#frame.length < bytes) this.#frame = new Uint8Array(Math.max(bytes, this.#frame.length * 2));
    return this.#frame;
  }

  /** Appends `data[start, end)` as one record. Throws the file's IO_ERROR, if any. */
  addRecord(data: Uint8Array, start = 0, end = data.length): void {
    let left = end - start;
    // Upper bound of the framed size: every block may add a header and a padded tail.
    const frame = this.#ensureFrame(left + (Math.ceil(left / (LOG_BLOCK_SIZE - LOG_HEADER_SIZE)) + 2) * (LOG_HEADER_SIZE * 2));
    let out = 0;
    let pos = start;
    let begin = true;
    let blockOffset = this.#blockOffset;
    do {
      const leftover = LOG_BLOCK_SIZE - blockOffset;
      if (leftover < LOG_HEADER_SIZE) {
        // Too little room for a header: zero-fill the block's tail and start the next block.
        frame.fill(0, out, out + leftover);
        out += leftover;
        blockOffset = 0;
      }
      const avail = LOG_BLOCK_SIZE - blockOffset - LOG_HEADER_SIZE;
      const fragment = left < avail ? left : avail;
      const last = fragment === left;
      const type = begin && last ? RecordType.FULL : begin ? RecordType.FIRST : last ? RecordType.LAST : RecordType.MIDDLE;
      const crc = crc32c(data, pos, pos + fragment, TYPE_CRC[type]);
      putFixed32(frame, out, maskCrc(crc));
      frame[out + 4] = fragment & 0xff;
      frame[out + 5] = fragment >>> 8;
      frame[out + 6] = type;
      frame.set(data.subarray(pos, pos + fragment), out + LOG_HEADER_SIZE);
      out += LOG_HEADER_SIZE + fragment;
      blockOffset += LOG_HEADER_SIZE + fragment;
      pos += fragment;
      left -= fragment;
      begin = false;
    } while (left > 0);
    this.file.append(frame, 0, out);
    this.#blockOffset = blockOffset;
  }

  sync(): void {
    const size = this.file.size;
    this.file.sync();
    this.#syncedSize = Math.max(this.#syncedSize, size);
  }

  /**
   * `sync` on the thread pool. The file stays open until every such sync has settled, even if
   * `close` is called first (a WAL switch while a group's fdatasync is in flight): an fdatasync
   * that runs after its descriptor was closed fails with EBADF, or syncs whatever file reused the
   * number.
   */
  syncAsync(): Promise<void> {
    this.#syncsInFlight++;
    const size = this.file.size;
    return this.file
      .syncAsync()
      .then(() => {
        this.#syncedSize = Math.max(this.#syncedSize, size);
      })
      .finally(() => {
        if (--this.#syncsInFlight > 0 || !this.#closeWanted) return;
        try {
          this.file.close();
        } catch {
          // The sync's own outcome is what the caller awaits; the records were synced before close.
        }
      });
  }

  /** Closes the file now, or once the syncs in flight have settled (then a close error goes unreported). */
  close(): void {
    if (this.#syncsInFlight > 0) {
      this.#closeWanted = true;
      return;
    }
    this.file.close();
  }
}
