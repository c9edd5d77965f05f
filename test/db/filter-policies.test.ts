/**
 * The database builds its tables' filters with whatever policy it is given — a user's own too —
 * and reads tables written under any policy it knows, so reopening with another policy is safe:
 * compaction rebuilds the filters as it rewrites data.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB, type OpenOptions } from '../../src/db.js';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import type { FilterPolicy, FilterProbe } from '../../src/filter/policy.js';
import { RibbonFilterPolicy } from '../../src/filter/ribbon.js';
import { BlockedBloomFilterPolicy } from '../../src/filter/blocked-bloom.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import { Table } from '../../src/sstable/table.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A user's own policy: an exact set (sorted keys, length-prefixed). Never a false positive. */
class ExactSetPolicy implements FilterPolicy {
  readonly name = 'test.ExactSet';
  createFilter(keys: readonly Uint8Array[]): Uint8Array {
    const parts = [...new Set(keys.map((k) => Buffer.from(k).toString('hex')))].sort();
    return new TextEncoder().encode(parts.join(','));
  }
  keyMayMatch(key: Uint8Array, filter: Uint8Array): boolean {
    return new TextDecoder().decode(filter).split(',').includes(Buffer.from(key).toString('hex'));
  }
  newProbe(): FilterProbe {
    let key = new Uint8Array(0);
    return {
      setKey: (k) => {
        key = k.slice();
      },
      mayMatch: (filter, start = 0, end = filter.length) => this.keyMayMatch(key, filter.subarray(start, end)),
    };
  }
}

const stats = (db: DB): Record<string, number> => JSON.parse(db.getProperty('sievekv.stats')!) as Record<string, number>;
const key = (i: number): string => `key-${String(i).padStart(6, '0')}`;

async function fill(db: DB, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++) db.putSync(key(i), `value-${i}`);
}

async function absentLookups(db: DB): Promise<{ checks: number; negatives: number }> {
  const before = stats(db);
  for (let i = 0; i < 500; i++) expect(db.getSync(`${key(i * 3)}x`)).toBeUndefined(); // inside the key range
  const after = stats(db);
  return { checks: after.filterChecks! - before.filterChecks!, negatives: after.filterNegatives! - before.filterNegatives! };
}

describe('filter policies in the database', () => {
  for (const where of ['memory', 'real files'] as const) {
    it(`uses a user's own FilterPolicy for flushes and compactions (${where})`, async () => {
      const options: OpenOptions = { filterPolicy: new ExactSetPolicy(), writeBufferSize: 16 * 1024, l0CompactionTrigger: 2 };
      let dir = '/db';
      if (where === 'memory') options.fs = new MemFileSystem();
      else {
        dir = mkdtempSync(join(tmpdir(), 'sievekv-policy-'));
        dirs.push(dir);
      }
      const db = await DB.open(dir, options);
      await fill(db, 0, 3000);
      await db.compactRange();
      const { checks, negatives } = await absentLookups(db);
      expect(checks).toBeGreaterThan(0);
      expect(negatives).toBe(checks); // an exact set never says "maybe" for an absent key
      for (let i = 0; i < 3000; i += 97) expect(db.getSync(key(i))?.toString()).toBe(`value-${i}`);
      await db.close();
      if (where === 'real files') {
        const table = readdirSync(dir).find((f) => f.endsWith('.ldb'))!;
        expect(readFileSync(join(dir, table)).includes(Buffer.from('filter.test.ExactSet'))).toBe(true);
      }
    });
  }

  it('reopened with another policy, reads tables of both kinds and rebuilds filters as it compacts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sievekv-policy-'));
    dirs.push(dir);
    let db = await DB.open(dir, { filterPolicy: new BloomFilterPolicy(10), writeBufferSize: 16 * 1024 });
    await fill(db, 0, 3000);
    await db.compactRange();
    await db.close();
    const tableNames = (): string[] => readdirSync(dir).filter((f) => f.endsWith('.ldb'));
    /** The filter a table's reader uses (the metaindex may be compressed: ask the reader). */
    const filterOf = (name: string): string => {
      const table = Table.open(new NodeFileSystem(), join(dir, name), { filterPolicies: [new BloomFilterPolicy(10), new RibbonFilterPolicy(10)] });
      const policy = table.filterPolicyName;
      table.close();
      return policy === 'sievekv.Ribbon1' ? 'ribbon' : policy === 'leveldb.BuiltinBloomFilter2' ? 'bloom' : 'none';
    };
    expect(tableNames().map(filterOf)).toEqual(tableNames().map(() => 'bloom'));

    // Now Ribbon, one filter per table. The Bloom tables still read — and still skip.
    db = await DB.open(dir, { filterPolicy: new RibbonFilterPolicy(10), filterScope: 'table', writeBufferSize: 16 * 1024 });
    const beforeCompaction = await absentLookups(db);
    expect(beforeCompaction.negatives).toBeGreaterThan(0.9 * beforeCompaction.checks);
    // Overwrite keys across the whole range, so that compaction rewrites every table (a table no
    // compaction touches keeps the filter it was written with, and is read with it).
    for (let i = 0; i < 4000; i += 3) db.putSync(key(i), `value-${i}`);
    const written = (i: number): boolean => i < 3000 || i % 3 === 0;
    for (let i = 0; i < 4000; i += 89) expect(db.getSync(key(i))?.toString()).toBe(written(i) ? `value-${i}` : undefined);
    await db.compactRange();
    // Every table was rewritten by compaction with the current policy.
    expect(tableNames().map(filterOf)).toEqual(tableNames().map(() => 'ribbon'));
    const after = await absentLookups(db);
    expect(after.negatives).toBeGreaterThan(0.95 * after.checks);
    for (let i = 0; i < 4000; i += 89) expect(db.getSync(key(i))?.toString()).toBe(written(i) ? `value-${i}` : undefined);
    await db.close();
  });

  it("by default, LevelDB's Bloom per block and a blocked Bloom filter per table; LevelDB-style readers use the Bloom one", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sievekv-policy-'));
    dirs.push(dir);
    const db = await DB.open(dir);
    await fill(db, 0, 3000);
    await db.compactRange();
    const { checks, negatives } = await absentLookups(db); // keys next to present ones
    expect(negatives).toBeGreaterThan(0.97 * checks); // the blocked Bloom; LevelDB's Bloom lets ~12% of these through
    await db.close();
    for (const name of readdirSync(dir).filter((f) => f.endsWith('.ldb'))) {
      const ours = Table.open(new NodeFileSystem(), join(dir, name), { filterPolicies: [new BlockedBloomFilterPolicy(), new BloomFilterPolicy(10)] });
      expect([ours.filterPolicyName, ours.filterScope]).toEqual(['sievekv.BlockedBloom1', 'table']);
      ours.close();
      const levelDBLike = Table.open(new NodeFileSystem(), join(dir, name), { filterPolicies: [new BloomFilterPolicy(10)] });
      expect([levelDBLike.filterPolicyName, levelDBLike.filterScope]).toEqual(['leveldb.BuiltinBloomFilter2', 'block']);
      levelDBLike.close();
    }
  });

  it('rejects a tableFilterPolicy that is not a FilterPolicy', async () => {
    await expect(DB.open('/db', { fs: new MemFileSystem(), tableFilterPolicy: 42 as never })).rejects.toThrow(/tableFilterPolicy/);
  });
});

