/**
 * The model decides (STYLE.md §11): random command lists — writes of every kind (async and sync
 * twins, synced or not, several at once for group commit), point reads, scans with random bounds,
 * direction, limit and seek (also at held snapshots, and with writes and flushes made while the
 * iterator is open), snapshots, flushes and close-and-reopen — run against a real database and a
 * sorted in-memory map, compared after every step. Tiny memtables make flushes and WAL switches
 * frequent. Also run with three regions (a test router). A shrunk failure goes to
 * test/regressions/ as a named test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, it } from 'vitest';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import type { RegionRouter } from '../../src/shard/region-router.js';
import { commandArb, optionsArb, runModel } from './db-model.js';

describe('DB against a sorted in-memory model', () => {
  it('on MemFileSystem', async () => {
    await fc.assert(
      fc.asyncProperty(optionsArb, fc.array(commandArb, { minLength: 10, maxLength: 120, size: 'max' }), async (options, commands) => {
        await runModel('/db', { ...options, fs: new MemFileSystem() }, commands);
      }),
      { numRuns: 500 },
    );
  });

  it('with three regions (one WAL, sequence space and MANIFEST; a memtable and tables each)', async () => {
    const router: RegionRouter = {
      name: 'test.first-byte-mod-3',
      regions: [0, 1, 2],
      regionOf: (key) => (key.length === 0 ? 0 : key[0]! % 3),
    };
    await fc.assert(
      fc.asyncProperty(optionsArb, fc.array(commandArb, { minLength: 10, maxLength: 120, size: 'max' }), async (options, commands) => {
        await runModel('/db', { ...options, fs: new MemFileSystem(), router }, commands);
      }),
      { numRuns: 100 },
    );
  });

  const root = mkdtempSync(join(tmpdir(), 'sievekv-model-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('on NodeFileSystem (real files)', async () => {
    let n = 0;
    const fs = new NodeFileSystem();
    await fc.assert(
      fc.asyncProperty(optionsArb, fc.array(commandArb, { minLength: 10, maxLength: 80, size: 'max' }), async (options, commands) => {
        const dir = join(root, `run-${n++}`);
        try {
          await runModel(dir, { ...options, fs }, commands);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 25 },
    );
  });
});
