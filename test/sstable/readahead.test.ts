/**
 * Readahead of a table iterator's block reads (src/sstable/readahead.ts): a scan in either
 * direction reads the file in growing windows once it reads blocks in sequence, returns exactly
 * what block-at-a-time reads return, starts over at a seek or a turn, and still reports a damaged
 * block as the block it is; a window that fails to read fails no block but its own.
 */
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { ValueType } from '../../src/format/internal-key.js';
import { FaultyFileSystem } from '../../src/fs/faulty-fs.js';
import type { MemFileSystem } from '../../src/fs/mem-fs.js';
import { BlockCache } from '../../src/sstable/block-cache.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { BLOCKS_BEFORE_READAHEAD, FIRST_WINDOW, MAX_WINDOW, MERGE_MAX_WINDOW, Readahead } from '../../src/sstable/readahead.js';
import { Table, type TableOptions } from '../../src/sstable/table.js';
import type { TableIterator } from '../../src/sstable/table-iterator.js';
import { buildTable, type Entry, makeEntry, newMemFs } from './table-support.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const BLOCK = 4101; // a 4 KiB block and its trailer

/** 6,000 entries of ~120 bytes: ~180 data blocks of 4 KiB, about 720 KiB of file. */
function entries(): Entry[] {
  const out: Entry[] = [];
  for (let i = 0; i < 6000; i++) {
    const value = enc.encode(`value-${i}-`.padEnd(100, String.fromCharCode(97 + (i % 26))));
    out.push(makeEntry(enc.encode(`key-${String(i).padStart(8, '0')}`), i + 1, ValueType.VALUE, value));
  }
  return out;
}

const userKey = (it: TableIterator): string => dec.decode(it.key().subarray(0, -8));

function scan(it: TableIterator, reverse: boolean): string[] {
  const keys: string[] = [];
  if (reverse) for (it.seekToLast(); it.valid(); it.prev()) keys.push(userKey(it));
  else for (it.seekToFirst(); it.valid(); it.next()) keys.push(userKey(it));
  return keys;
}

function tableOf(compression: CompressionType, options: TableOptions = {}): { mem: MemFileSystem; fs: FaultyFileSystem; table: Table; all: Entry[] } {
  const mem = newMemFs();
  const all = entries();
  buildTable(mem, '/db/t.ldb', all, { compression, blockSize: 4096 });
  const fs = new FaultyFileSystem(mem);
  return { mem, fs, table: Table.open(fs, '/db/t.ldb', options), all };
}

/** Runs `readahead` over `blocks` consecutive blocks from `first` (step ±1): the window sizes it read. */
function walk(ra: Readahead, first: number, blocks: number, step: 1 | -1, limit: number): number[] {
  const planned: number[] = [];
  for (let i = 0, b = first; i < blocks && b >= 0; i++, b += step) {
    const offset = b * BLOCK;
    ra.follow(offset, BLOCK);
    if (ra.holds(offset, BLOCK)) continue;
    const n = ra.plan(offset, BLOCK, limit);
    planned.push(n);
    if (n > 0) {
      expect(step > 0 ? ra.start : ra.start + n).toBe(step > 0 ? offset : offset + BLOCK);
      expect(ra.start).toBeGreaterThanOrEqual(0);
      expect(ra.start + n).toBeLessThanOrEqual(limit);
      ra.filled(n);
      expect(ra.holds(offset, BLOCK)).toBe(true);
    }
  }
  return planned;
}

describe('Readahead', () => {
  it('reads single blocks until the sequence is long enough, then windows that double up to the cap', () => {
    const limit = 10 * MAX_WINDOW;
    const planned = walk(new Readahead(), 0, Math.floor(limit / BLOCK), 1, limit);
    expect(BLOCKS_BEFORE_READAHEAD).toBe(2);
    expect(planned.slice(0, 7)).toEqual([0, 0, FIRST_WINDOW, 2 * FIRST_WINDOW, 4 * FIRST_WINDOW, 8 * FIRST_WINDOW, MAX_WINDOW]);
    expect(planned.slice(6, -1).every((n) => n === MAX_WINDOW)).toBe(true);
  });

  it('a lower cap (a merge input) stops the doubling there, in a buffer of that size', () => {
    const limit = 10 * MAX_WINDOW;
    const ra = new Readahead(MERGE_MAX_WINDOW);
    const planned = walk(ra, 0, Math.floor(limit / BLOCK), 1, limit);
    expect(MERGE_MAX_WINDOW).toBe(4 * FIRST_WINDOW);
    expect(planned.slice(0, 5)).toEqual([0, 0, FIRST_WINDOW, 2 * FIRST_WINDOW, MERGE_MAX_WINDOW]);
    expect(planned.slice(4, -1).every((n) => n === MERGE_MAX_WINDOW)).toBe(true);
    expect(ra.bytes.length).toBe(MERGE_MAX_WINDOW);
    // Its released buffer goes to readaheads of its size only.
    const buffer = ra.bytes;
    ra.release();
    const full = new Readahead();
    walk(full, 0, 10, 1, limit);
    expect(full.bytes).not.toBe(buffer);
    const capped = new Readahead(MERGE_MAX_WINDOW);
    walk(capped, 0, 10, 1, limit);
    expect(capped.bytes).toBe(buffer);
    expect(() => new Readahead(FIRST_WINDOW - 1)).toThrow(/below the first window/);
  });

  it('reads backwards for a backward sequence, down to offset 0', () => {
    const planned = walk(new Readahead(), 200, 201, -1, 1 << 30);
    expect(planned.slice(0, 4)).toEqual([0, 0, FIRST_WINDOW, 2 * FIRST_WINDOW]);
    expect(planned.length).toBeLessThan(12);
  });

  it('starts over at a jump or a turn: single blocks, then the first window size again', () => {
    const ra = new Readahead();
    const limit = 1 << 30;
    walk(ra, 0, 200, 1, limit); // windows up to MAX_WINDOW
    // A jump to a block the window holds, or one it does not: the sequence counts from there.
    const inWindow = ra.start / BLOCK + 1;
    expect(walk(ra, inWindow, 4, 1, limit)).toEqual([]); // nothing read
    expect(walk(ra, 1000, 4, 1, limit)).toEqual([0, 0, FIRST_WINDOW]);
    // A jump back into a full-size window, then on past its end: the next window is the first size.
    const big = new Readahead();
    walk(big, 0, 200, 1, limit);
    const first = big.start / BLOCK;
    expect(walk(big, first + 10, 1, 1, limit)).toEqual([]); // the jump, served by the window
    expect(walk(big, first + 11, 100, 1, limit)[0]).toBe(FIRST_WINDOW);
    // A turn: backwards from the block before the last one. The blocks back to the forward
    // window's start come from it and count for the new sequence; the first read before it is a
    // window of the first size, not of the forward one's.
    walk(ra, 2000, 100, 1, limit);
    const back = walk(ra, 2098, 200, -1, limit);
    expect(back.slice(0, 3)).toEqual([FIRST_WINDOW, 2 * FIRST_WINDOW, 4 * FIRST_WINDOW]);
  });

  it('a reset drops the window; a release returns its buffer for the next readahead', () => {
    const ra = new Readahead();
    walk(ra, 0, 10, 1, 1 << 30);
    const buffer = ra.bytes;
    expect(buffer.length).toBe(MAX_WINDOW);
    ra.reset();
    expect(ra.holds(0, 1)).toBe(false);
    ra.release();
    const next = new Readahead();
    walk(next, 0, 10, 1, 1 << 30);
    expect(next.bytes).toBe(buffer);
  });
});

describe('table iterators with readahead', () => {
  for (const compression of [CompressionType.NONE, CompressionType.LZ4, CompressionType.SNAPPY]) {
    it(`scan forward and backward as block-at-a-time reads do, in far fewer reads (compression ${compression})`, () => {
      const { fs, table, all } = tableOf(compression);
      const want = all.map((e) => dec.decode(e.userKey));
      for (const reverse of [false, true]) {
        const it = table.newIterator({ fillCache: false });
        const before = fs.calls.read;
        const blocksBefore = table.stats.blocksRead;
        expect(scan(it, reverse)).toEqual(reverse ? [...want].reverse() : want);
        it.close();
        expect(table.stats.blocksRead - blocksBefore).toBeGreaterThan(150);
        expect(fs.calls.read - before).toBeLessThan(30); // ~180 blocks in windows of up to 256 KiB
      }
      table.close();
    });
  }

  it('with a block cache: a second scan finds its blocks cached, a scan after eviction reads ahead again', () => {
    const { fs, table, all } = tableOf(CompressionType.LZ4, { blockCache: new BlockCache(64 << 20) });
    const want = all.map((e) => dec.decode(e.userKey));
    for (let round = 0; round < 3; round++) {
      const it = table.newIterator();
      const before = fs.calls.read;
      expect(scan(it, round === 2)).toEqual(round === 2 ? [...want].reverse() : want);
      it.close();
      expect(fs.calls.read - before).toBeLessThan(30);
    }
    table.close();
  });

  it('a seek after a long scan reads its block alone, not a window', () => {
    const { fs, table, all } = tableOf(CompressionType.NONE);
    const it = table.newIterator({ fillCache: false });
    for (it.seekToFirst(); it.valid() && userKey(it) < 'key-00004000'; it.next());
    const before = fs.calls.read;
    it.seek(all[200]!.key); // far behind the window
    expect(userKey(it)).toBe(dec.decode(all[200]!.userKey));
    expect(fs.calls.read - before).toBe(1);
    it.next();
    expect(userKey(it)).toBe(dec.decode(all[201]!.userKey));
    it.close();
    table.close();
  });

  it('a window that fails to read fails no block: the scan reads them alone and goes on', () => {
    const { fs, table, all } = tableOf(CompressionType.LZ4);
    const want = all.map((e) => dec.decode(e.userKey));
    // Reads 0 and 1 of a scan are its first two blocks, 2 the first window, 3 the second.
    for (const after of [2, 3]) {
      const it = table.newIterator({ fillCache: false });
      const disarm = fs.inject({ ops: ['read'], path: /t\.ldb$/, after });
      const injected = fs.injected.length;
      expect(scan(it, false)).toEqual(want);
      expect(fs.injected.length).toBe(injected + 1);
      disarm();
      it.close();
    }
    table.close();
  });

  it('a damaged block in a window is reported as that block, after every entry before it', () => {
    const mem = newMemFs();
    const all = entries();
    buildTable(mem, '/db/t.ldb', all, { compression: CompressionType.NONE, blockSize: 4096 });
    const bytes = mem.readFile('/db/t.ldb');
    const damagedAt = 300_000; // in the 256 KiB window a forward scan reads from ~245 KiB
    bytes[damagedAt] = bytes[damagedAt]! ^ 0x55;
    const w = mem.createWritable('/db/t.ldb');
    w.append(bytes);
    w.close();
    const table = Table.open(mem, '/db/t.ldb', {});
    const it = table.newIterator({ fillCache: false });
    let seen = 0;
    let error: unknown;
    try {
      for (it.seekToFirst(); it.valid(); it.next()) seen++;
    } catch (err) {
      error = err;
    }
    expect(isSieveError(error) && error.code).toBe('CORRUPTION');
    const offset = (error as { offset?: number }).offset!;
    expect(offset).toBeLessThanOrEqual(damagedAt);
    expect(offset).toBeGreaterThan(damagedAt - BLOCK);
    expect(seen).toBeGreaterThan(2000); // every entry before the damaged block was read
    it.close();
    table.close();
  });
});
