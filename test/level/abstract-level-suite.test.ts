/**
 * abstract-level's own test suite (the contract every Level database passes), run against
 * SieveLevel inside `npm test`: with sievekv's defaults, and with tiny memtables, tables and
 * blocks so that nearly every read and write goes through level-0 tables, flushes and merges.
 * Prints the counts; fails on any failed assertion (and on a suite that ran nothing).
 */
import { describe, expect, it } from 'vitest';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { runAbstractLevelSuite, type SuiteResult } from './run-suite.js';

function report(label: string, r: SuiteResult): void {
  console.log(
    `abstract-level suite (${label}): ${r.tests} tests, ${r.passed + r.failed} assertions: ${r.passed} passed, ${r.failed} failed (${r.seconds.toFixed(1)} s)`,
  );
  const e = r.engine;
  console.log(`  sievekv under it: ${e.opens} opens, ${e.flushes} memtable flushes, ${e.compactions} compactions, ${e.blocksRead} table blocks read`);
  for (const f of r.failures.slice(0, 50)) console.log(`  not ok: ${f}`);
}

describe("abstract-level's test suite against SieveLevel", () => {
  it('passes in full with the default options', async () => {
    const r = await runAbstractLevelSuite({});
    report('defaults', r);
    expect(r.failures).toEqual([]);
    expect(r.tests).toBeGreaterThan(1000);
    expect(r.passed).toBeGreaterThan(4000);
  });

  it('passes in full with tiny memtables, tables and blocks, every write flushed and compacted (reads from tables)', async () => {
    // On the in-memory file system, where flushes and merges run on this thread: a worker per
    // database (the suite opens about a thousand) would cost seconds each here.
    const r = await runAbstractLevelSuite(
      { fs: new MemFileSystem(), writeBufferSize: 1024, maxFileSize: 2048, blockSize: 128, blockRestartInterval: 2, l0CompactionTrigger: 2 },
      'tables',
    );
    report('tiny memtables and tables', r);
    expect(r.failures).toEqual([]);
    expect(r.tests).toBeGreaterThan(1000);
    expect(r.passed).toBeGreaterThan(4000);
  }, 600_000); // 53-146 s in full runs on two cores: the default 180 s left too little margin
});
