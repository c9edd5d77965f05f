/**
 * LogReader: reads records back from a log in LevelDB's format (see log-format.ts), a 32 KiB
 * block at a time through the FileSystem seam.
 *
 * What it does with damage, as LevelDB's log::Reader does:
 * - a header or fragment cut short by the end of the file (a writer that died mid-append) ends
 *   the log quietly: that record was never acknowledged;
 * - a bad checksum, a length that runs past its block, an unknown type, or fragments out of order
 *   are reported to `onCorruption` (offset and bytes dropped) and skipped: the reader drops the
 *   rest of the damaged block and resynchronizes on the next one;
 * - a zero header (preallocated space) is skipped without a report.
 * Whether a reported corruption is fatal is the caller's decision (the database tolerates damage
 * after the last good record — a torn tail — and nothing else unless `paranoidChecks` is off).
 *
 * `readRecord` returns a view that is valid until the next call (borrowed: copy to keep it).
 */
import { getFixed32 } from '../format/coding.js';
import { crc32c, crc32cExtendByte, unmaskCrc } from '../format/crc32c.js';
import type { RandomAccessFile } from '../fs/file-system.js';
import { LOG_BLOCK_SIZE, LOG_HEADER_SIZE, MAX_RECORD_TYPE, RecordType } from './log-format.js';

export interface LogCorruption {
  /** File offset where the dropped bytes start. */
  offset: number;
  /** Bytes dropped. */
  bytes: number;
  reason: string;
}

export interface LogReaderOptions {
  /** Verify fragment checksums. @defaultValue true */
  verifyChecksums?: boolean;
  /** Told of every stretch of the log that was dropped for damage. */
  onCorruption?: (corruption: LogCorruption) => void;
}

/** Physical-read outcomes beyond the record types. */
const EOF = -1;
const BAD_RECORD = -2;

const TYPE_CRC = [0, 1, 2, 3, 4].map((t) => crc32cExtendByte(0, t));

export class LogReader {
  readonly #file: RandomAccessFile;
  readonly #verify: boolean;
  readonly #onCorruption: ((c: LogCorruption) => void) | undefined;
  readonly #block = new Uint8Array(LOG_BLOCK_SIZE);
  /** The current block's bytes are #block[#pos, #end); it starts at file offset #blockStart. */
  #pos = 0;
  #end = 0;
  #blockStart = 0;
  #nextRead = 0;
  #eof = false;
  #scratch = new Uint8Array(LOG_BLOCK_SIZE);
  /** Where the last physical fragment read starts: [#fragStart, #fragEnd) within #block. */
  #fragStart = 0;
  #fragEnd = 0;
  /** File offset of the record last returned. */
  lastRecordOffset = 0;

  constructor(file: RandomAccessFile, options: LogReaderOptions = {}) {
    this.#file = file;
    this.#verify = options.verifyChecksums ?? true;
    this.#onCorruption = options.onCorruption;
  }

  #report(offset: number, bytes: number, reason: string): void {
    this.#onCorruption?.({ offset, bytes, reason });
  }

  /** Reads the next physical fragment; returns its type, EOF or BAD_RECORD. */
  #readPhysical(): number {
    for (;;) {
      if (this.#end - this.#pos < LOG_HEADER_SIZE) {
        if (this.#eof) {
          // A header cut short at the end of the file: the writer died mid-append.
          this.#pos = this.#end;
          return EOF;
        }
        // Skip the block's zero-filled tail and read the next block.
        this.#blockStart = this.#nextRead;
        const n = this.#file.readAt(this.#block, 0, LOG_BLOCK_SIZE, this.#nextRead);
        this.#nextRead += n;
        this.#pos = 0;
        this.#end = n;
        if (n < LOG_BLOCK_SIZE) this.#eof = true;
        continue;
      }
      const block = this.#block;
      const at = this.#pos;
      const length = block[at + 4]! | (block[at + 5]! << 8);
      const type = block[at + 6]!;
      if (LOG_HEADER_SIZE + length > this.#end - at) {
        const dropped = this.#end - at;
        this.#pos = this.#end;
        if (!this.#eof) {
          this.#report(this.#blockStart + at, dropped, 'bad record length');
          return BAD_RECORD;
        }
        return EOF; // the fragment was cut short by the end of the file
      }
      if (type === RecordType.ZERO && length === 0) {
        // Preallocated, never-written space: skip the rest of the block without a report.
        this.#pos = this.#end;
        return BAD_RECORD;
      }
      const start = at + LOG_HEADER_SIZE;
      if (this.#verify) {
        const expected = unmaskCrc(getFixed32(block, at));
        const typeCrc = type <= MAX_RECORD_TYPE ? TYPE_CRC[type]! : crc32cExtendByte(0, type);
        const actual = crc32c(block, start, start + length, typeCrc);
        if (expected !== actual) {
          // The length may itself be damaged: drop the rest of the block.
          const dropped = this.#end - at;
          this.#pos = this.#end;
          this.#report(this.#blockStart + at, dropped, 'checksum mismatch');
          return BAD_RECORD;
        }
      }
      this.#pos = start + length;
      this.#fragStart = start;
      this.#fragEnd = start + length;
      return type;
    }
  }

  /** Appends the last fragment to the record being assembled, which holds `length` bytes. */
  #appendScratch(length: number): void {
    const need = length + (this.#fragEnd - this.#fragStart);
    if (this.#scratch.length < need) {
      const grown = new Uint8Array(Math.max(this.#scratch.length * 2, need));
      grown.set(this.#scratch.subarray(0, length));
      this.#scratch = grown;
    }
    this.#scratch.set(this.#block.subarray(this.#fragStart, this.#fragEnd), length);
  }

  /** The next whole record, or null at the end of the log. The view is valid until the next call. */
  readRecord(): Uint8Array | null {
    let inFragmented = false;
    let length = 0;
    let recordOffset = 0;
    for (;;) {
      const type = this.#readPhysical();
      const fragmentOffset = this.#blockStart + this.#fragStart - LOG_HEADER_SIZE;
      switch (type) {
        case RecordType.FULL:
          if (inFragmented) this.#report(recordOffset, length, 'partial record without end');
          this.lastRecordOffset = fragmentOffset;
          return this.#block.subarray(this.#fragStart, this.#fragEnd);
        case RecordType.FIRST:
          if (inFragmented) this.#report(recordOffset, length, 'partial record without end');
          inFragmented = true;
          recordOffset = fragmentOffset;
          this.#appendScratch(0);
          length = this.#fragEnd - this.#fragStart;
          break;
        case RecordType.MIDDLE:
        case RecordType.LAST:
          if (!inFragmented) {
            this.#report(fragmentOffset, this.#fragEnd - this.#fragStart, 'missing start of fragmented record');
            break;
          }
          this.#appendScratch(length);
          length += this.#fragEnd - this.#fragStart;
          if (type === RecordType.LAST) {
            this.lastRecordOffset = recordOffset;
            return this.#scratch.subarray(0, length);
          }
          break;
        case EOF:
          // A fragmented record cut off by the end of the file was never completed: not damage.
          return null;
        case BAD_RECORD:
          if (inFragmented) {
            this.#report(recordOffset, length, 'error in middle of record');
            inFragmented = false;
          }
          break;
        default:
          this.#report(fragmentOffset, this.#fragEnd - this.#fragStart + (inFragmented ? length : 0), `unknown record type ${type}`);
          inFragmented = false;
          break;
      }
    }
  }
}
