import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import type { RandomAccessFile } from '../../src/fs/file-system.js';
import { LOG_BLOCK_SIZE, LOG_HEADER_SIZE } from '../../src/wal/log-format.js';
import { LogReader, type LogCorruption } from '../../src/wal/log-reader.js';
import { LogWriter } from '../../src/wal/log-writer.js';
import { readFileSync } from 'node:fs';
import { fixturePath } from '../support/fixtures.js';

/** A RandomAccessFile over bytes in memory. */
function fileOf(bytes: Uint8Array): RandomAccessFile {
  return {
    size: bytes.length,
    readAt(buf, bufOffset, length, position) {
      const end = Math.min(bytes.length, position + length);
      if (position >= end) return 0;
      buf.set(bytes.subarray(position, end), bufOffset);
      return end - position;
    },
    close() {},
  };
}

/** Writes the records; returns the log and each record's [start, end) span in the file. */
function writeLogSpans(records: Uint8Array[]): { bytes: Uint8Array; spans: [number, number][] } {
  const fs = new MemFileSystem();
  fs.mkdir('/d');
  const writer = new LogWriter(fs.createWritable('/d/log'));
  const spans: [number, number][] = [];
  for (const r of records) {
    const start = writer.size;
    writer.addRecord(r);
    spans.push([start, writer.size]);
  }
  return { bytes: fs.readFile('/d/log'), spans };
}

function writeLog(records: Uint8Array[]): Uint8Array {
  return writeLogSpans(records).bytes;
}

/** Same records, same order, same bytes (Buffer.compare: deep equality is slow on big arrays). */
function expectSameRecords(actual: Uint8Array[], expected: Uint8Array[]): void {
  expect(actual.length).toBe(expected.length);
  actual.forEach((r, i) => expect(Buffer.compare(r, expected[i]!)).toBe(0));
}

function readLog(bytes: Uint8Array): { records: Uint8Array[]; corruptions: LogCorruption[] } {
  const corruptions: LogCorruption[] = [];
  const reader = new LogReader(fileOf(bytes), { onCorruption: (c) => corruptions.push(c) });
  const records: Uint8Array[] = [];
  for (let r = reader.readRecord(); r !== null; r = reader.readRecord()) records.push(r.slice());
  return { records, corruptions };
}

const filled = (n: number, seed: number): Uint8Array => {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
};

/** Record sizes that land fragments and headers on and around block boundaries. */
const edgeSize = fc.oneof(
  fc.integer({ min: 0, max: 100 }),
  fc.constantFrom(LOG_BLOCK_SIZE - LOG_HEADER_SIZE, LOG_BLOCK_SIZE - LOG_HEADER_SIZE - 1, LOG_BLOCK_SIZE - 2 * LOG_HEADER_SIZE, LOG_BLOCK_SIZE, 2 * LOG_BLOCK_SIZE + 3),
  fc.integer({ min: 0, max: 3 * LOG_BLOCK_SIZE }),
);

describe('log writer and reader', () => {
  it('round-trips any sequence of records, including empty and multi-block ones', () => {
    fc.assert(
      fc.property(fc.array(edgeSize, { maxLength: 12 }), (sizes) => {
        const records = sizes.map((n, i) => filled(n, i));
        const { records: back, corruptions } = readLog(writeLog(records));
        expect(corruptions).toEqual([]);
        expectSameRecords(back, records);
      }),
      { numRuns: 150 },
    );
  });

  it('pads a block tail shorter than a header with zeros and emits a zero-length FIRST when exactly 7 bytes remain', () => {
    // First record leaves exactly 7 bytes in block 0: the next record starts with an empty FIRST.
    const first = filled(LOG_BLOCK_SIZE - 2 * LOG_HEADER_SIZE, 1);
    const bytes = writeLog([first, filled(10, 2)]);
    const at = LOG_BLOCK_SIZE - LOG_HEADER_SIZE;
    expect([bytes[at + 4], bytes[at + 5], bytes[at + 6]]).toEqual([0, 0, 2]); // length 0, FIRST
    const padded = writeLog([filled(LOG_BLOCK_SIZE - LOG_HEADER_SIZE - 3, 3), filled(5, 4)]);
    expect([...padded.subarray(LOG_BLOCK_SIZE - 3, LOG_BLOCK_SIZE)]).toEqual([0, 0, 0]);
    expect(readLog(padded).records).toHaveLength(2);
  });

  it('treats every truncation as a clean end after a prefix of the records (a torn tail)', () => {
    const records = [5, 40_000, 0, 300, LOG_BLOCK_SIZE - 7, 17].map((n, i) => filled(n, i));
    const bytes = writeLog(records);
    for (let cut = 0; cut <= bytes.length; cut += cut < 200 ? 1 : 97) {
      const { records: back, corruptions } = readLog(bytes.subarray(0, cut));
      // Only reports of a record cut short: the caller decides whether that is a torn tail.
      for (const c of corruptions) expect(c.kind).toBe('truncated');
      expectSameRecords(back, records.slice(0, back.length));
    }
  });

  it('reports a flipped byte, drops at most the damaged block, and invents nothing', () => {
    const records = Array.from({ length: 30 }, (_, i) => filled(((i * 7919) % 5000) + 1, i));
    const { bytes, spans } = writeLogSpans(records);
    fc.assert(
      fc.property(fc.nat(bytes.length - 1), fc.integer({ min: 1, max: 255 }), (pos, xor) => {
        const damaged = bytes.slice();
        damaged[pos]! ^= xor;
        const { records: back, corruptions } = readLog(damaged);
        // Every record that does not touch the damaged block comes back, in order, intact;
        // nothing else does (a flip inside a record's bytes fails its checksum).
        const blockStart = pos - (pos % LOG_BLOCK_SIZE);
        const blockEnd = blockStart + LOG_BLOCK_SIZE;
        const untouched = records.filter((_, i) => spans[i]![1] <= blockStart || spans[i]![0] >= blockEnd);
        expect(back.length).toBeGreaterThanOrEqual(untouched.length);
        let j = 0;
        for (const r of back) {
          while (j < records.length && Buffer.compare(records[j]!, r) !== 0) j++;
          expect(j).toBeLessThan(records.length); // an original record, in order
          j++;
        }
        for (const r of untouched) expect(back.some((b) => Buffer.compare(b, r) === 0)).toBe(true);
        if (back.length < records.length) expect(corruptions.length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });

  it('reports zeroed space as zeroed (whether it is a torn tail is the caller\'s call) and reads on after it', () => {
    const bytes = writeLog([filled(100, 1)]);
    const withZeros = new Uint8Array(bytes.length + LOG_BLOCK_SIZE);
    withZeros.set(bytes);
    const { records, corruptions } = readLog(withZeros);
    expect(records).toHaveLength(1);
    expect(corruptions.length).toBeGreaterThan(0);
    expect(corruptions.every((c) => c.kind === 'zeroed')).toBe(true);
    // Zeros in the middle: the records after them are read (and the zeros reported).
    const after = writeLog([filled(50, 2)]);
    const middle = new Uint8Array(2 * LOG_BLOCK_SIZE + after.length);
    middle.set(bytes);
    middle.set(after, 2 * LOG_BLOCK_SIZE);
    const read = readLog(middle);
    expect(read.records).toHaveLength(2);
    expect(read.corruptions[0]!.kind).toBe('zeroed');
  });

  it('resynchronizes after a damaged record at the next fragment that verifies, in the same block', () => {
    const records = Array.from({ length: 10 }, (_, i) => filled(60 + i, i));
    const { bytes, spans } = writeLogSpans(records);
    for (const target of [0, 2, 9]) {
      for (const at of [0, 4, 5, 6, 7, 20]) {
        const damaged = bytes.slice();
        damaged[spans[target]![0] + at]! ^= 0x10;
        const { records: back, corruptions } = readLog(damaged);
        const kept = records.filter((_, i) => i !== target);
        expectSameRecords(back, kept);
        if (target === 9 && (at === 4 || at === 5)) {
          // The last record's length now runs past the end of the file: what a cut looks like.
          expect(corruptions.map((c) => c.kind)).toEqual(['truncated']);
          continue;
        }
        expect(corruptions).toHaveLength(1);
        expect(corruptions[0]!.offset).toBe(spans[target]![0]);
      }
    }
  });

  it('a length damaged into running past the end of the file is damage when a verified fragment follows, a torn end when none does', () => {
    const records = Array.from({ length: 5 }, (_, i) => filled(40, i));
    const { bytes, spans } = writeLogSpans(records);
    const damaged = bytes.slice();
    damaged[spans[1]![0] + 5] = 0x7f; // length high byte: far past the end of the file
    const { records: back, corruptions } = readLog(damaged);
    expectSameRecords(back, [records[0]!, records[2]!, records[3]!, records[4]!]);
    expect(corruptions.map((c) => c.kind)).toEqual(['length']);
    const last = bytes.slice();
    last[spans[4]![0] + 5] = 0x7f; // the last record: indistinguishable from a cut, a torn end
    const tail = readLog(last);
    expectSameRecords(tail.records, records.slice(0, 4));
    expect(tail.corruptions.map((c) => c.kind)).toEqual(['truncated']);
  });
});

describe('LevelDB-made logs', () => {
  for (const [name, file] of [
    ['ldb-log-edges', '000003.log'],
    ['ldb-snappy-small', '000028.log'],
    ['ldb-log-edges', 'MANIFEST-000002'],
    ['ldb-small-nocomp', 'MANIFEST-000007'],
    ['ldb-snappy-small', 'MANIFEST-000026'],
  ] as const) {
    it(`${name}/${file}: every record reads without damage and re-encodes to the same bytes`, () => {
      const original = new Uint8Array(readFileSync(fixturePath(name, file)));
      const { records, corruptions } = readLog(original);
      expect(corruptions).toEqual([]);
      expect(records.length).toBeGreaterThan(0);
      expect(Buffer.compare(writeLog(records), original)).toBe(0);
    });
  }
});

describe('LogWriter.unsynced', () => {
  it('is true from an append until a sync that began after it has finished', async () => {
    const fs = new MemFileSystem();
    fs.mkdir('/d');
    const writer = new LogWriter(fs.createWritable('/d/log'));
    expect(writer.unsynced).toBe(false);
    writer.addRecord(new Uint8Array([1, 2, 3]));
    expect(writer.unsynced).toBe(true);
    writer.sync();
    expect(writer.unsynced).toBe(false);
    writer.addRecord(new Uint8Array([4]));
    const pending = writer.syncAsync();
    expect(writer.unsynced).toBe(true); // not finished yet
    await pending;
    expect(writer.unsynced).toBe(false);
    const again = writer.syncAsync();
    writer.addRecord(new Uint8Array([5])); // after the sync began: not covered by it
    await again;
    expect(writer.unsynced).toBe(true);
    writer.close();
  });

  it('takes the bytes of a log opened for appending as unsynced', () => {
    const fs = new MemFileSystem();
    fs.mkdir('/d');
    const first = new LogWriter(fs.createWritable('/d/log'));
    first.addRecord(new Uint8Array(10));
    first.close();
    expect(new LogWriter(fs.openAppendable('/d/log')).unsynced).toBe(true);
  });
});
