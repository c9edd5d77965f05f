/**
 * Subcompactions: a level-0 merge started while level 0 is at the slowdown trigger runs in two
 * parts at once, split at a user key (the second on the flush worker), with two background
 * threads. Real files, so the parts really run on two worker threads. The database must hold exactly what was written, every level
 * ≥ 1 sorted and disjoint, and the LOG must show merges that ran in parts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { verifyDB } from '../../src/tools/verify.js';
import { rng, testSeed } from '../support/seed.js';

const root = mkdtempSync(join(tmpdir(), 'sievekv-subcompaction-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it('level-0 merges under write pressure run in two parts and lose or duplicate nothing', async () => {
  const dir = join(root, 'db');
  const options = {
    writeBufferSize: 32 * 1024,
    maxFileSize: 8 * 1024,
    l0CompactionTrigger: 4,
    l0SlowdownTrigger: 4,
    l0StopTrigger: 8,
    compression: 'none' as const,
    backgroundThreads: 2,
  };
  let db = await DB.open(dir, options);
  const expected = new Map<string, string>();
  const random = rng(testSeed());
  const next = (): number => Math.floor(random() * 2 ** 32);
  for (let round = 0; round < 150; round++) {
    const ops: { type: 'put' | 'del'; key: string; value?: string }[] = [];
    for (let i = 0; i < 60; i++) {
      const key = `k${String(next() % 4000).padStart(5, '0')}`;
      if (next() % 10 === 0) {
        ops.push({ type: 'del', key });
        expected.delete(key);
      } else {
        const value = `${key}:${round}:${i}`.padEnd(90, '.');
        ops.push({ type: 'put', key, value });
        expected.set(key, value);
      }
    }
    db.batchSync(ops as Parameters<DB['batchSync']>[0]);
  }
  const check = (d: DB): void => {
    const seen = new Map<string, string>();
    for (const [k, v] of d.iterator()) seen.set(k.toString(), v.toString());
    expect(seen).toEqual(expected);
    for (const [k, v] of [...expected].slice(0, 200)) expect(d.getSync(k)?.toString()).toBe(v);
  };
  check(db);
  await db.close();
  const log = readFileSync(join(dir, 'LOG'), 'utf8');
  expect(log).toMatch(/compacting region 0: \d+@0 \+ \d+@1 files \([^)]*\) in 2 parts/);
  // Every table readable, levels ≥ 1 in key order without overlaps (the parts' outputs meet at
  // the split key without sharing it).
  const report = verifyDB(dir);
  expect(report.problems).toEqual([]);
  db = await DB.open(dir, options);
  check(db);
  await db.compactRange();
  check(db);
  await db.close();
});

it('with one background thread, level-0 merges under the same pressure run whole', async () => {
  const dir = join(root, 'one');
  const options = { writeBufferSize: 32 * 1024, maxFileSize: 8 * 1024, l0SlowdownTrigger: 4, l0StopTrigger: 8, compression: 'none' as const, backgroundThreads: 1 };
  const db = await DB.open(dir, options);
  const random = rng(testSeed());
  const expected = new Map<string, string>();
  for (let b = 0; b < 60; b++) {
    const ops = Array.from({ length: 200 }, () => {
      const key = `k${String(Math.floor(random() * 20_000)).padStart(6, '0')}`;
      const value = `v${b}-${key}`.repeat(3);
      expected.set(key, value);
      return { type: 'put' as const, key, value };
    });
    db.batchSync(ops);
  }
  await db.compactRange();
  for (const [k, v] of expected) expect((await db.get(k))?.toString()).toBe(v);
  await db.close();
  const log = readFileSync(join(dir, 'LOG'), 'utf8');
  expect(log).toMatch(/compacted region 0: \d+@0/);
  expect(log).not.toMatch(/in 2 parts/);
});
