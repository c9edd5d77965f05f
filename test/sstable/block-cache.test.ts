/** BlockCache: LRU order by recency, byte accounting, counters, per-table erase, against a model. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { Block, takeBlockBytes } from '../../src/sstable/block.js';
import { BlockBuilder } from '../../src/sstable/block-builder.js';
import { BlockCache, DEFAULT_BLOCK_CACHE_CAPACITY } from '../../src/sstable/block-cache.js';

/** A valid block whose contents are `size` bytes or a little more (one entry with a value). */
function blockOf(size: number): Block {
  const b = new BlockBuilder(16, 64);
  b.add(new Uint8Array([1]), new Uint8Array(Math.max(0, size - 12)));
  return new Block(b.finish().slice());
}

/** A block whose bytes come from the block pool, as a table's data block reads do (recyclable). */
function pooledBlockOf(size: number): Block {
  const raw = blockOf(size).data;
  const bytes = takeBlockBytes(raw.length);
  bytes.set(raw);
  return Block.fromTaken(bytes, 'f', 0);
}

/** True if the next data block read of `block`'s size takes it from the pool. */
function pooled(block: Block): boolean {
  const bytes = takeBlockBytes(block.size);
  const taken = bytes === block.data;
  if (taken) Block.fromTaken(bytes, 'f', 0).drop(); // back to the pool (its bytes still hold a valid block)
  return taken;
}

describe('BlockCache and pooled blocks', () => {
  it('an evicted block that no iterator pins gives its bytes back', () => {
    const cache = new BlockCache(5000);
    const a = pooledBlockOf(4000);
    cache.insert(1, 0, a);
    cache.insert(1, 4096, pooledBlockOf(4000)); // evicts a
    expect(pooled(a)).toBe(true);
  });

  it('a pinned block gives them back only at its last unpin', () => {
    const cache = new BlockCache(5000);
    const a = pooledBlockOf(4000);
    cache.insert(1, 0, a);
    a.pin();
    a.pin();
    cache.eraseTable(1);
    expect(pooled(a)).toBe(false);
    a.unpin();
    expect(pooled(a)).toBe(false);
    a.unpin();
    expect(pooled(a)).toBe(true);
  });

  it('the same block inserted again stays, with its bytes', () => {
    const cache = new BlockCache(5000);
    const a = pooledBlockOf(4000);
    cache.insert(1, 0, a);
    cache.insert(1, 0, a);
    expect(cache.lookup(1, 0)).toBe(a);
    expect(pooled(a)).toBe(false);
    cache.clear();
    expect(pooled(a)).toBe(true);
  });
});

describe('BlockCache', () => {
  it('defaults to 8 MiB and rejects a bad capacity', () => {
    expect(new BlockCache().capacity).toBe(DEFAULT_BLOCK_CACHE_CAPACITY);
    expect(DEFAULT_BLOCK_CACHE_CAPACITY).toBe(8 * 1024 * 1024);
    for (const bad of [-1, 1.5, Number.NaN]) {
      expect(() => new BlockCache(bad)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    }
  });

  it('evicts the least recently used block; a lookup refreshes recency', () => {
    const cache = new BlockCache(300);
    const id = cache.newId();
    const [a, b, c, d] = [blockOf(100), blockOf(100), blockOf(100), blockOf(100)];
    cache.insert(id, 0, a, 100);
    cache.insert(id, 100, b, 100);
    cache.insert(id, 200, c, 100);
    expect(cache.usage).toBe(300);
    expect(cache.lookup(id, 0)).toBe(a); // a is now the most recent; b the least
    cache.insert(id, 300, d, 100);
    expect(cache.lookup(id, 100)).toBeUndefined();
    expect(cache.lookup(id, 0)).toBe(a);
    expect(cache.lookup(id, 200)).toBe(c);
    expect(cache.lookup(id, 300)).toBe(d);
    expect(cache.evictions).toBe(1);
    expect({ hits: cache.hits, misses: cache.misses }).toEqual({ hits: 4, misses: 1 });
    expect(cache.size).toBe(3);
  });

  it('charges the block contents by default; replacing an entry re-charges it', () => {
    const cache = new BlockCache(10_000);
    const block = blockOf(500);
    cache.insert(1, 0, block);
    expect(cache.usage).toBe(block.data.byteLength);
    cache.insert(1, 0, blockOf(100), 100);
    expect(cache.usage).toBe(100);
    expect(cache.size).toBe(1);
  });

  it('does not cache a block larger than the capacity; capacity 0 caches nothing', () => {
    const cache = new BlockCache(50);
    cache.insert(1, 0, blockOf(100), 100);
    expect(cache.size).toBe(0);
    const cold = new BlockCache(0);
    cold.insert(1, 0, blockOf(10), 10);
    expect(cold.lookup(1, 0)).toBeUndefined();
    expect(cold.misses).toBe(1);
  });

  it('eraseTable drops one table id, keeps the others; ids are distinct', () => {
    const cache = new BlockCache(10_000);
    const [x, y] = [cache.newId(), cache.newId()];
    expect(x).not.toBe(y);
    for (let i = 0; i < 5; i++) {
      cache.insert(x, i * 10, blockOf(10), 10);
      cache.insert(y, i * 10, blockOf(10), 20);
    }
    cache.eraseTable(x);
    expect(cache.usage).toBe(100);
    expect(cache.size).toBe(5);
    expect(cache.lookup(x, 0)).toBeUndefined();
    expect(cache.lookup(y, 0)).toBeDefined();
    cache.eraseTable(12345); // unknown: nothing happens
    cache.clear();
    expect({ usage: cache.usage, size: cache.size }).toEqual({ usage: 0, size: 0 });
  });

  it('setCapacity shrinks by evicting the oldest', () => {
    const cache = new BlockCache(1000);
    for (let i = 0; i < 10; i++) cache.insert(1, i, blockOf(10), 100);
    cache.setCapacity(350);
    expect(cache.usage).toBe(300);
    expect([...Array(10).keys()].filter((i) => cache.lookup(1, i) !== undefined)).toEqual([7, 8, 9]);
    expect(() => cache.setCapacity(-5)).toThrow();
    try {
      cache.setCapacity(-5);
    } catch (err) {
      expect(isSieveError(err, 'INVALID_ARGUMENT')).toBe(true);
    }
  });

  it('keeps the newest blocks through thousands of inserts, evictions and erases', () => {
    const cache = new BlockCache(300);
    const block = blockOf(10);
    for (let i = 0; i < 5000; i++) {
      cache.insert(1 + (i % 7), i * 4096, block, 1);
      if (i % 1000 === 999) cache.eraseTable(3);
    }
    // The last 300 inserts, less those of id 3 (erased at the end).
    for (let i = 0; i < 5000; i++) {
      const held = i >= 4700 && i % 7 !== 2;
      expect(cache.lookup(1 + (i % 7), i * 4096)).toBe(held ? block : undefined);
    }
    expect(cache.size).toBe(300 - Math.ceil(300 / 7) + 1);
  });

  it('matches an LRU model under random inserts, lookups and erases', () => {
    const blocks = Array.from({ length: 4 }, (_, i) => blockOf(10 + i));
    const offset = fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 3 }).map((i) => 2 ** 32 + i));
    const op = fc.oneof(
      // Offsets past 2^32 too: the cache hashes both halves.
      fc.record({ op: fc.constant('insert' as const), id: fc.integer({ min: 1, max: 3 }), off: offset, charge: fc.integer({ min: 0, max: 120 }) }),
      fc.record({ op: fc.constant('lookup' as const), id: fc.integer({ min: 1, max: 3 }), off: offset }),
      fc.record({ op: fc.constant('erase' as const), id: fc.integer({ min: 1, max: 3 }) }),
    );
    fc.assert(
      // Up to hundreds of entries live at once: the cells grow and are rebuilt along the way.
      fc.property(fc.integer({ min: 0, max: 4000 }), fc.array(op, { maxLength: 600 }), (capacity, ops) => {
        const cache = new BlockCache(capacity);
        // Model: entries in recency order, oldest first.
        let model: { id: number; off: number; charge: number; block: Block }[] = [];
        let hits = 0;
        let misses = 0;
        for (const o of ops) {
          if (o.op === 'insert') {
            const block = blocks[(o.id + o.off) % blocks.length]!;
            cache.insert(o.id, o.off, block, o.charge);
            model = model.filter((e) => e.id !== o.id || e.off !== o.off);
            if (o.charge <= capacity) {
              let usage = model.reduce((s, e) => s + e.charge, 0);
              while (usage + o.charge > capacity) usage -= model.shift()!.charge;
              model.push({ id: o.id, off: o.off, charge: o.charge, block });
            }
          } else if (o.op === 'lookup') {
            const i = model.findIndex((e) => e.id === o.id && e.off === o.off);
            const got = cache.lookup(o.id, o.off);
            if (i < 0) {
              misses++;
              expect(got).toBeUndefined();
            } else {
              hits++;
              const [e] = model.splice(i, 1);
              model.push(e!);
              expect(got).toBe(e!.block);
            }
          } else {
            cache.eraseTable(o.id);
            model = model.filter((e) => e.id !== o.id);
          }
          expect(cache.usage).toBe(model.reduce((s, e) => s + e.charge, 0));
          expect(cache.size).toBe(model.length);
          expect(cache.usage).toBeLessThanOrEqual(capacity);
        }
        expect({ hits: cache.hits, misses: cache.misses }).toEqual({ hits, misses });
        for (const e of model) expect(cache.lookup(e.id, e.off)).toBe(e.block);
      }),
      { numRuns: 200 },
    );
  });
});

describe('BlockCache admission (the doorkeeper)', () => {
  /** A cache of `blocks` blocks of ~1 KiB, filled to its capacity. */
  function fullCache(blocks: number): BlockCache {
    const cache = new BlockCache(blocks * 1024);
    for (let i = 0; cache.usage + 1024 <= cache.capacity; i++) cache.insert(1, i * 1024, blockOf(1000));
    expect(cache.usage + blockOf(1000).size).toBeGreaterThan(cache.capacity);
    return cache;
  }

  it('admits every block while the cache has room', () => {
    const cache = new BlockCache(64 * 1024);
    for (let i = 0; i < 40; i++) {
      expect(cache.admit(2, i * 1024)).toBe(true);
      cache.insert(2, i * 1024, blockOf(1000));
    }
    expect(cache.declined).toBe(0);
  });

  it('once full, admits a block at its second miss, not its first', () => {
    const cache = fullCache(64);
    let declined = 0;
    for (let i = 0; i < 50; i++) {
      if (!cache.admit(7, i * 4096)) declined++;
    }
    // A first miss is declined unless its bit collides with one set before (rare at 50 of 4096+).
    expect(declined).toBeGreaterThanOrEqual(48);
    expect(cache.declined).toBe(declined);
    for (let i = 0; i < 50; i++) expect(cache.admit(7, i * 4096)).toBe(true);
    expect(cache.declined).toBe(declined);
  });

  it('forgets the misses older than its window', () => {
    const cache = fullCache(64); // window: max(256, 2 · 16 blocks of 4 KiB)
    expect(cache.admit(9, 0)).toBe(false);
    // More first misses than the window (some collide with a bit set before and count as seen):
    // the doorkeeper is cleared once 256 were remembered.
    for (let i = 1; i <= 300; i++) cache.admit(10, i * 4096);
    expect(cache.admit(9, 0)).toBe(false); // forgotten: a first miss again
    expect(cache.admit(9, 0)).toBe(true);
  });

  it('a cache of capacity 0 admits nothing; resetCounters zeroes declined', () => {
    const cache = new BlockCache(0);
    expect(cache.admit(1, 0)).toBe(false);
    expect(cache.admit(1, 0)).toBe(false);
    expect(cache.declined).toBe(2);
    cache.resetCounters();
    expect(cache.declined).toBe(0);
  });
});
