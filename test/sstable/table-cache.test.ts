/**
 * TableCache: LRU of open tables by file number, hit/miss counters, files closed on eviction
 * (but only once no iterator holds them), `.sst` fallback, and block-cache ids that survive a
 * close and reopen of a table but not `evict`.
 */
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { KeyProbes } from '../../src/filter/key-probes.js';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import { encodeInternalKey, MAX_SEQUENCE, ValueType } from '../../src/format/internal-key.js';
import type { FileSystem, RandomAccessFile } from '../../src/fs/file-system.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { BlockCache } from '../../src/sstable/block-cache.js';
import { GetStatus, TableGetResult } from '../../src/sstable/table.js';
import { TableCache, tableFileName } from '../../src/sstable/table-cache.js';
import { TableStats } from '../../src/sstable/table-stats.js';
import { buildTable, type Entry, hex, makeEntry, newMemFs } from './table-support.js';

/** Counts opens and closes of readable files per path. */
class CountingFs {
  readonly opens = new Map<string, number>();
  readonly closes = new Map<string, number>();
  readonly fs: FileSystem;

  constructor(readonly inner: MemFileSystem) {
    const self = this;
    this.fs = new Proxy(inner, {
      get(target, prop, receiver) {
        if (prop !== 'openReadable') return Reflect.get(target, prop, receiver) as unknown;
        return (path: string): RandomAccessFile => {
          const file = target.openReadable(path);
          self.opens.set(path, (self.opens.get(path) ?? 0) + 1);
          let closed = false;
          return {
            size: file.size,
            readAt: (buf, off, len, pos) => {
              if (closed) throw new Error(`read from closed ${path}`);
              return file.readAt(buf, off, len, pos);
            },
            close: () => {
              closed = true;
              self.closes.set(path, (self.closes.get(path) ?? 0) + 1);
              file.close();
            },
          };
        };
      },
    });
  }

  openCount(path: string): number {
    return (this.opens.get(path) ?? 0) - (this.closes.get(path) ?? 0);
  }
}

const enc = new TextEncoder();
const bloom = new BloomFilterPolicy(10);

function entriesFor(fileNumber: number): Entry[] {
  return Array.from({ length: 200 }, (_, i) =>
    makeEntry(enc.encode(`f${fileNumber}-k${String(i).padStart(4, '0')}`), i + 1, ValueType.VALUE, enc.encode(`value ${fileNumber}/${i}`)),
  );
}

/** Files 1..n as /db/NNNNNN.ldb; returns their sizes. */
function setup(n: number): { mem: MemFileSystem; sizes: number[] } {
  const mem = newMemFs();
  const sizes = [0];
  for (let f = 1; f <= n; f++) {
    buildTable(mem, `/db/${tableFileName(f)}`, entriesFor(f), { blockSize: 256, filterPolicy: bloom });
    sizes.push(mem.size(`/db/${tableFileName(f)}`));
  }
  return { mem, sizes };
}

function get(cache: TableCache, fileNumber: number, size: number, userKey: string): { status: GetStatus; value: string } {
  const k = enc.encode(userKey);
  const probes = new KeyProbes();
  probes.reset(k);
  const result = new TableGetResult();
  const status = cache.get(fileNumber, size, encodeInternalKey(k, MAX_SEQUENCE, ValueType.VALUE), k, probes, result);
  return { status, value: Buffer.from(result.value).toString() };
}

const path = (f: number): string => `/db/${tableFileName(f)}`;

describe('TableCache', () => {
  it('names files NNNNNN.ldb', () => {
    expect(tableFileName(7)).toBe('000007.ldb');
    expect(tableFileName(1234567)).toBe('1234567.ldb');
  });

  it('keeps the most recently used tables open, closes the least recently used', () => {
    const { mem, sizes } = setup(3);
    const counting = new CountingFs(mem);
    const cache = new TableCache(counting.fs, '/db', { capacity: 2, filterPolicies: [bloom] });
    expect(get(cache, 1, sizes[1]!, 'f1-k0005')).toEqual({ status: GetStatus.FOUND, value: 'value 1/5' });
    expect(get(cache, 2, sizes[2]!, 'f2-k0006')).toEqual({ status: GetStatus.FOUND, value: 'value 2/6' });
    expect(get(cache, 1, sizes[1]!, 'f1-k0007').status).toBe(GetStatus.FOUND); // hit: 1 is now the newest
    expect(get(cache, 3, sizes[3]!, 'f3-k0001').status).toBe(GetStatus.FOUND); // evicts 2
    expect({ hits: cache.hits, misses: cache.misses, size: cache.size }).toEqual({ hits: 1, misses: 3, size: 2 });
    expect([1, 2, 3].map((f) => counting.openCount(path(f)))).toEqual([1, 0, 1]);
    expect(get(cache, 2, sizes[2]!, 'absent').status).toBe(GetStatus.NOT_FOUND); // reopens 2, evicts 1
    expect([1, 2, 3].map((f) => counting.openCount(path(f)))).toEqual([0, 1, 1]);
    expect(counting.opens.get(path(2))).toBe(2);
    cache.close();
    expect([1, 2, 3].map((f) => counting.openCount(path(f)))).toEqual([0, 0, 0]);
  });

  it('an iterator keeps its table open past eviction; closing it closes the file', () => {
    const { mem, sizes } = setup(2);
    const counting = new CountingFs(mem);
    const cache = new TableCache(counting.fs, '/db', { capacity: 1 });
    const it = cache.newIterator(1, sizes[1]!);
    it.seekToFirst();
    get(cache, 2, sizes[2]!, 'f2-k0000'); // evicts table 1 from the cache, but the iterator holds it
    cache.evict(1);
    expect(counting.openCount(path(1))).toBe(1);
    let n = 1;
    for (it.next(); it.valid(); it.next()) n++;
    expect(n).toBe(200);
    it.close();
    it.close(); // idempotent: releases once
    expect(counting.openCount(path(1))).toBe(0);
    expect(counting.closes.get(path(1))).toBe(1);
    expect(() => it.seekToFirst()).toThrow(expect.objectContaining({ code: 'CLOSED' }));
  });

  it('falls back to NNNNNN.sst; a missing table is IO_ERROR naming the .ldb', () => {
    const { mem, sizes } = setup(1);
    mem.rename(path(1), '/db/000001.sst');
    const cache = new TableCache(mem, '/db');
    expect(get(cache, 1, sizes[1]!, 'f1-k0003').status).toBe(GetStatus.FOUND);
    try {
      get(cache, 9, 100, 'x');
      expect.unreachable();
    } catch (err) {
      expect(isSieveError(err, 'IO_ERROR')).toBe(true);
      expect((err as { file?: string }).file).toBe(path(9));
    }
  });

  it('a corrupt table is CORRUPTION and is not cached', () => {
    const mem = newMemFs();
    const w = mem.createWritable(path(4));
    w.append(new Uint8Array(100).fill(7));
    w.close();
    const cache = new TableCache(mem, '/db');
    expect(() => get(cache, 4, 100, 'x')).toThrow(expect.objectContaining({ code: 'CORRUPTION', file: path(4) }));
    expect(cache.size).toBe(0);
  });

  it('blocks cached before an LRU close are found after the reopen; evict drops them', () => {
    const { mem, sizes } = setup(2);
    const blockCache = new BlockCache(1 << 20);
    const stats = new TableStats();
    const cache = new TableCache(mem, '/db', { capacity: 1, blockCache, stats });
    const scan = (f: number): number => {
      const it = cache.newIterator(f, sizes[f]!);
      let n = 0;
      for (it.seekToFirst(); it.valid(); it.next()) n++;
      it.close();
      return n;
    };
    expect(scan(1)).toBe(200);
    const afterFirst = blockCache.usage;
    expect(afterFirst).toBeGreaterThan(0);
    expect(stats.blocksRead).toBeGreaterThan(1);
    const reads = stats.blocksRead;
    scan(2); // closes table 1 (capacity 1)
    scan(1); // reopens table 1: its blocks come from the cache
    expect(stats.blockCacheHits).toBeGreaterThanOrEqual(reads);
    const usage = blockCache.usage;
    cache.evict(1);
    expect(blockCache.usage).toBeLessThan(usage);
    expect(blockCache.usage).toBe(usage - afterFirst);
  });

  it('fillCache: false reads without filling the block cache', () => {
    const { mem, sizes } = setup(1);
    const blockCache = new BlockCache(1 << 20);
    const cache = new TableCache(mem, '/db', { blockCache });
    const it = cache.newIterator(1, sizes[1]!, { fillCache: false });
    const keys: string[] = [];
    for (it.seekToFirst(); it.valid(); it.next()) keys.push(hex(it.key()));
    it.close();
    expect(keys.length).toBe(200);
    expect(blockCache.size).toBe(0);
  });

  it('rejects a bad capacity', () => {
    expect(() => new TableCache(newMemFs(), '/db', { capacity: 0 })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});
