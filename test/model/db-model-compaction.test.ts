/**
 * The model test with compactions all the time (issue 5), on MemFileSystem with jobs inline: the
 * commands and the runner are in db-model-compaction.ts (tiny memtables, files and level targets;
 * fills, compactRange of sub-ranges, snapshots held and checked across compactions, reopen with
 * other filter and compression options). The runs must reach level 2 or deeper, also with three
 * regions (keys routed by their last byte). The same commands run on real files, with jobs on
 * worker threads, in db-model-worker.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import type { RegionRouter } from '../../src/shard/region-router.js';
import { commandsArb, compactionOptionsArb, runCompactionModel, type CompactionCommand } from './db-model-compaction.js';


describe('DB against the model with compactions all the time', () => {
  it('on MemFileSystem (inline jobs): levels 2 and deeper are reached, snapshots held across compactions', async () => {
    let deepest = 0;
    let compactions = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(compactionOptionsArb, commandsArb, async (options, commands) => {
        const run = await runCompactionModel('/db', { ...options, fs: new MemFileSystem() }, commands);
        deepest = Math.max(deepest, run.deepestLevel);
        compactions += run.compactions;
        runs++;
      }),
      { numRuns: 45 },
    );
    console.log(`compaction model (MemFileSystem): ${runs} runs, ${compactions} compactions, deepest level ${deepest}`);
    expect(deepest).toBeGreaterThanOrEqual(2);
    expect(compactions).toBeGreaterThan(runs * 5);
  });

  it('with three regions (compactions picked across regions; compactRange over all of them)', async () => {
    const router: RegionRouter = { name: 'test.first-byte-mod-3', regions: [0, 1, 2], regionOf: (key) => (key.length === 0 ? 0 : key[key.length - 1]! % 3) };
    let deepest = 0;
    await fc.assert(
      fc.asyncProperty(compactionOptionsArb, commandsArb, async (options, commands) => {
        const run = await runCompactionModel('/db', { ...options, fs: new MemFileSystem(), router }, commands);
        deepest = Math.max(deepest, run.deepestLevel);
      }),
      { numRuns: 10 },
    );
    expect(deepest).toBeGreaterThanOrEqual(2);
  });

  it('a fixed heavy run reaches level 3 with a snapshot held throughout', async () => {
    const commands: CompactionCommand[] = [{ t: 'snapshot' }];
    for (let i = 0; i < 12; i++) {
      commands.push({ t: 'fill', start: i * 50, count: 250, sequential: i % 3 === 0, deletes: 10, valueMax: 150, compressible: false, turnEvery: 4, seed: 1000 + i });
      if (i % 4 === 1) commands.push({ t: 'snapshot' });
      if (i % 4 === 3) commands.push({ t: 'checkHeld' }, { t: 'compactRange', lo: i * 40, hi: i * 40 + 200 });
    }
    const run = await runCompactionModel(
      '/db',
      { fs: new MemFileSystem(), writeBufferSize: 2048, maxFileSize: 2048, maxBytesForLevelBase: 4096, levelMultiplier: 2, l0CompactionTrigger: 2, l0SlowdownTrigger: 4, l0StopTrigger: 6, blockSize: 512 },
      commands,
    );
    expect(run.deepestLevel).toBeGreaterThanOrEqual(3);
  });
});
