/**
 * LogReader: reads records back from a log in LevelDB's format (see log-format.ts), a 32 KiB
 * block at a time through the FileSystem seam.
 *
 * What it does with damage:
 * - a header or record cut short by the end of the file (a writer that died mid-append) ends the
 *   log, reported as `truncated` (LevelDB ends quietly; whether it is a torn tail is the caller's
 *   call: it is at the end of the newest log only). Unless a fragment whose checksum verifies
 *   follows it in the bytes present: then its length is damaged, not cut short;
 * - a bad checksum, a length that runs past its block, a zeroed header, an unknown type, or
 *   fragments out of order are reported to `onCorruption` (offset, bytes dropped, kind) and
 *   skipped. Where LevelDB drops the rest of the damaged block, this reader looks for the next
 *   fragment in the block whose checksum verifies and resumes there: only bytes that cannot be
 *   trusted are dropped.
 * Whether a reported corruption is fatal is the caller's decision. `fragmentsVerified` against
 * a report's `fragmentsBefore` tells it whether a verified fragment came after the report: damage
 * with nothing verifiable after it, at the end of the newest log, is what a crash leaves (a torn
 * tail); damage followed by a verified fragment is not (see db/recovery.ts).
 *
 * `readRecord` returns a view that is valid until the next call (borrowed: copy to keep it).
 */
import { getFixed32 } from '../format/coding.js';
import { crc32c, crc32cExtendByte, unmaskCrc } from '../format/crc32c.js';
import type { RandomAccessFile } from '../fs/file-system.js';
import { LOG_BLOCK_SIZE, LOG_HEADER_SIZE, MAX_RECORD_TYPE, RecordType } from './log-format.js';

/**
 * What a dropped stretch held. `truncated`: a record cut short by the end of the file (what a
 * writer that died mid-append leaves); `zeroed`: all-zero headers (unwritten space); `content`: a
 * record that verifies but does not decode (reported by callers).
 */
export type LogDamageKind = 'truncated' | 'checksum' | 'length' | 'zeroed' | 'type' | 'fragment' | 'content';

export interface LogCorruption {
  /** File offset where the dropped bytes start. */
  offset: number;
  /** Bytes dropped. */
  bytes: number;
  kind: LogDamageKind;
  reason: string;
  /** Fragments whose checksum verified before this report: less than the reader's `fragmentsVerified` later means something verified followed it. */
  fragmentsBefore: number;
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
  /** Fragments read so far whose checksum verified. */
  fragmentsVerified = 0;

  constructor(file: RandomAccessFile, options: LogReaderOptions = {}) {
    this.#file = file;
    this.#verify = options.verifyChecksums ?? true;
    this.#onCorruption = options.onCorruption;
  }

  #report(offset: number, bytes: number, kind: LogDamageKind, reason: string): void {
    this.#onCorruption?.({ offset, bytes, kind, reason, fragmentsBefore: this.fragmentsVerified });
  }

  /** True if a fragment header at `at` in the current block is whole and its checksum verifies. */
  #verifies(at: number): boolean {
    const block = this.#block;
    const type = block[at + 6]!;
    if (type < RecordType.FULL || type > MAX_RECORD_TYPE) return false;
    const length = block[at + 4]! | (block[at + 5]! << 8);
    const start = at + LOG_HEADER_SIZE;
    if (start + length > this.#end) return false;
    return unmaskCrc(getFixed32(block, at)) === crc32c(block, start, start + length, TYPE_CRC[type]!);
  }

  /** Where the next fragment after `at` whose checksum verifies starts, or the block's end (also when checksums are not verified). */
  #nextVerified(at: number): number {
    if (!this.#verify) return this.#end;
    for (let p = at + 1; p + LOG_HEADER_SIZE <= this.#end; p++) if (this.#verifies(p)) return p;
    return this.#end;
  }

  /** Skips damage at `at`, resuming at `next` (the next fragment that verifies); reports what was dropped. */
  #skipDamage(at: number, kind: LogDamageKind, reason: string, next = this.#nextVerified(at)): void {
    this.#pos = next;
    this.#report(this.#blockStart + at, next - at, kind, reason);
  }

  /** Reads the next physical fragment; returns its type, EOF or BAD_RECORD. */
  #readPhysical(): number {
    for (;;) {
      if (this.#end - this.#pos < LOG_HEADER_SIZE) {
        if (this.#eof) {
          // A header cut short at the end of the file (the writer died mid-append), unless it is
          // only a block's zero trailer.
          const at = this.#pos;
          this.#pos = this.#end;
          if (this.#block.subarray(at, this.#end).some((b) => b !== 0)) {
            this.#report(this.#blockStart + at, this.#end - at, 'truncated', 'header cut short by the end of the file');
          }
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
        const next = this.#nextVerified(at);
        if (this.#eof && next === this.#end) {
          // The fragment was cut short by the end of the file: a writer died mid-append.
          this.#pos = this.#end;
          this.#report(this.#blockStart + at, this.#end - at, 'truncated', 'record cut short by the end of the file');
          return EOF;
        }
        this.#skipDamage(at, 'length', 'bad record length', next);
        return BAD_RECORD;
      }
      if (type === RecordType.ZERO && length === 0 && getFixed32(block, at) === 0) {
        // Never-written (zeroed) space. LevelDB skips it silently; here it is reported, since
        // zeros followed by good records are damage, not preallocation.
        this.#skipDamage(at, 'zeroed', 'zeroed bytes');
        return BAD_RECORD;
      }
      const start = at + LOG_HEADER_SIZE;
      if (this.#verify) {
        const expected = unmaskCrc(getFixed32(block, at));
        const typeCrc = type <= MAX_RECORD_TYPE ? TYPE_CRC[type]! : crc32cExtendByte(0, type);
        const actual = crc32c(block, start, start + length, typeCrc);
        if (expected !== actual) {
          // The length may itself be damaged: resume at the next fragment that verifies.
          this.#skipDamage(at, 'checksum', 'checksum mismatch');
          return BAD_RECORD;
        }
      }
      this.fragmentsVerified++;
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
          if (inFragmented) this.#report(recordOffset, length, 'fragment', 'partial record without end');
          this.lastRecordOffset = fragmentOffset;
          return this.#block.subarray(this.#fragStart, this.#fragEnd);
        case RecordType.FIRST:
          if (inFragmented) this.#report(recordOffset, length, 'fragment', 'partial record without end');
          inFragmented = true;
          recordOffset = fragmentOffset;
          this.#appendScratch(0);
          length = this.#fragEnd - this.#fragStart;
          break;
        case RecordType.MIDDLE:
        case RecordType.LAST:
          if (!inFragmented) {
            this.#report(fragmentOffset, this.#fragEnd - this.#fragStart, 'fragment', 'missing start of fragmented record');
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
          // A fragmented record cut off by the end of the file was never completed.
          if (inFragmented) this.#report(recordOffset, length, 'truncated', 'fragmented record cut short by the end of the file');
          return null;
        case BAD_RECORD:
          if (inFragmented) {
            this.#report(recordOffset, length, 'fragment', 'error in middle of record');
            inFragmented = false;
          }
          break;
        default:
          this.#report(fragmentOffset, this.#fragEnd - this.#fragStart + (inFragmented ? length : 0), 'type', `unknown record type ${type}`);
          inFragmented = false;
          break;
      }
    }
  }
}
