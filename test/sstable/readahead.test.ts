/**
 * Readahead of a table iterator's block reads (src/sstable/readahead.ts): a scan in either
 * direction reads the file in growing windows once it reads blocks in sequence, returns exactly
 * what block-at-a-time reads return, and still reports a damaged block as the block it is.
 */
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { FaultyFileSystem } from '../../src/fs/faulty-fs.js';
import { BLOCKS_BEFORE_READAHEAD, FIRST_WINDOW, MAX_WINDOW, Readahead } from '../../src/sstable/readahead.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { Table } from '../../src/sstable/table.js';
import { ValueType } from '../../src/format/internal-key.js';
import { buildTable, makeEntry, newMemFs, type Entry } from './table-support.js';

const enc = new TextEncoder();

/** 6,000 entries of ~120 bytes: ~180 data blocks of 4 KiB, about 720 KiB of file. */
function entries(): Entry[] {
  const out: Entry[] = [];
  for (let i = 0; i < 6000; i++) {
    const value = enc.encode(`value-${i}-`.padEnd(100, String.fromCharCode(97 + (i % 26))));
    out.push(makeEntry(enc.encode(`key-${String(i).padStart(8, '0')}`), i + 1, ValueType.VALUE, value));
  }
  return out;
}

function scan(table: Table, reverse: boolean): string[] {
  const it = table.newIterator({ fillCache: false });
  const keys: string[] = [];
  if (reverse) for (it.seekToLast(); it.valid(); it.prev()) keys.push(new TextDecoder().decode(it.key().subarray(0, -8)));
  else for (it.seekToFirst(); it.valid(); it.next()) keys.push(new TextDecoder().decode(it.key().subarray(0, -8)));
  it.close();
  return keys;
}

describe('Readahead.plan', () => {
  it('reads single blocks until the sequence is long enough, then windows that double up to the cap', () => {
    const ra = new Readahead();
    const limit = 10 * MAX_WINDOW;
    const planned: number[] = [];
    for (let offset = 0; offset + 4101 <= limit; offset += 4101) {
      if (ra.holds(offset, 4101)) {
        ra.noteHit(offset, 4101);
        continue;
      }
      const n = ra.plan(offset, 4101, limit);
      planned.push(n);
      if (n > 0) {
        expect(ra.start).toBe(offset); // forward: the window starts with the block
        ra.filled(n);
        expect(ra.holds(offset, 4101)).toBe(true);
      }
    }
    expect(planned.slice(0, 7)).toEqual([0, 0, FIRST_WINDOW, 2 * FIRST_WINDOW, 4 * FIRST_WINDOW, 8 * FIRST_WINDOW, MAX_WINDOW]);
    expect(BLOCKS_BEFORE_READAHEAD).toBe(2);
    expect(planned.slice(6, -1).every((n) => n === MAX_WINDOW)).toBe(true);
    expect(planned.at(-1)).toBeLessThanOrEqual(MAX_WINDOW); // the last one stops at the limit
  });

  it('reads backwards for a backward sequence, never before offset 0 or past the limit; a jump starts over', () => {
    const ra = new Readahead();
    let offset = 100_000;
    let n = 0;
    for (let i = 0; i <= BLOCKS_BEFORE_READAHEAD; i++) {
      offset -= 4000;
      n = ra.plan(offset, 4000, 1 << 20);
    }
    expect(n).toBe(FIRST_WINDOW);
    expect(ra.start + n).toBe(offset + 4000); // the window ends with the block
    ra.filled(n);
    expect(ra.holds(offset - 8000, 4000)).toBe(true);
    // Near the file's start the window stops at 0.
    const low = new Readahead();
    for (const o of [12_000, 8_000, 4_000, 0]) {
      const size = low.plan(o, 4000, 1 << 20);
      if (size > 0) expect(low.start).toBe(0);
    }
    // Forward near the limit: the window stops there; a jump elsewhere reads one block again.
    const high = new Readahead();
    for (const o of [0, 4000, 8000]) high.plan(o, 4000, 14_000);
    expect(high.start).toBe(8000);
    expect(high.plan(50_000, 4000, 1 << 20)).toBe(0);
  });
});

describe('table iterators with readahead', () => {
  for (const compression of [CompressionType.NONE, CompressionType.LZ4, CompressionType.SNAPPY]) {
    it(`scan forward and backward as block-at-a-time reads do, in far fewer reads (compression ${compression})`, () => {
      const mem = newMemFs();
      const all = entries();
      buildTable(mem, '/db/t.ldb', all, { compression, blockSize: 4096 });
      const fs = new FaultyFileSystem(mem);
      const table = Table.open(fs, '/db/t.ldb', {});
      const want = all.map((e) => new TextDecoder().decode(e.userKey));
      for (const reverse of [false, true]) {
        const before = fs.calls.read;
        const keys = scan(table, reverse);
        expect(keys).toEqual(reverse ? [...want].reverse() : want);
        const reads = fs.calls.read - before;
        const blocks = table.stats.blocksRead;
        expect(blocks).toBeGreaterThan(100);
        expect(reads).toBeLessThan(30); // ~180 blocks in windows of up to 256 KiB
      }
      table.close();
    });
  }

  it('a seek reads its block alone, and a damaged block in a window is reported as that block', () => {
    const mem = newMemFs();
    const all = entries();
    buildTable(mem, '/db/t.ldb', all, { compression: CompressionType.NONE, blockSize: 4096 });
    // Damage one byte of a block far into the data: a window read before it holds it.
    const bytes = mem.readFile('/db/t.ldb');
    const damagedAt = 300_000;
    bytes[damagedAt] = bytes[damagedAt]! ^ 0x55;
    const w = mem.createWritable('/db/t.ldb');
    w.append(bytes);
    w.close();
    const fs = new FaultyFileSystem(mem);
    const table = Table.open(fs, '/db/t.ldb', {});
    const it = table.newIterator({ fillCache: false });
    const before = fs.calls.read;
    it.seek(all[10]!.key);
    expect(fs.calls.read - before).toBe(1);
    let seen = 0;
    let error: unknown;
    try {
      for (it.seekToFirst(); it.valid(); it.next()) seen++;
    } catch (err) {
      error = err;
    }
    expect(isSieveError(error) && error.code).toBe('CORRUPTION');
    expect((error as { offset?: number }).offset).toBeLessThanOrEqual(damagedAt);
    expect((error as { offset?: number }).offset).toBeGreaterThan(damagedAt - 4200);
    expect(seen).toBeGreaterThan(2000); // every entry before the damaged block was read
    it.close();
    table.close();
  });
});
