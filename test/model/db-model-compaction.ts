/**
 * The model with compactions all the time (issue 5), shared by db-model-compaction.test.ts (on
 * MemFileSystem, jobs inline) and db-model-worker.test.ts (real files, jobs on worker threads):
 * tiny memtables, files and level targets (levelMultiplier 2–4, level 0 compacted at 2 files), so
 * that every few writes a flush or a compaction runs. On top of the model's commands (db-model.ts)
 * it adds:
 *
 * - `fill`: a run of writes over a wider key space (`f0000`…), sequential or random, puts and
 *   deletes, values random or compressible, some through the sync twins; with turns of the event
 *   loop between them so background jobs install while writes go on.
 * - `compactRange` of a random sub-range (or everything), then a check of the range.
 * - `checkHeld`: every held snapshot, scanned forwards and backwards and read key by key, equals
 *   the model at the moment it was taken — after whatever flushes and compactions ran since.
 * - `reopen` with other options (filter policy, compression): outputs are then built with the new
 *   ones while files of the old kind are still read.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { OpenOptions } from '../../src/db.js';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import { RibbonFilterPolicy } from '../../src/filter/ribbon.js';
import { rng } from '../support/seed.js';
import { applyWrite, commandArb, ModelRun, sortedEntries, type Bytes, type Command, type Write } from './db-model.js';

export type Fill = {
  t: 'fill';
  /** First key index of a sequential fill; the rng seed of a random one. */
  start: number;
  count: number;
  sequential: boolean;
  /** Percent of deletes. */
  deletes: number;
  /** Largest value length. */
  valueMax: number;
  compressible: boolean;
  /** Writes between turns of the event loop (background jobs install in those turns). */
  turnEvery: number;
  seed: number;
};

export type CompactionCommand =
  | Command
  | Fill
  | { t: 'compactRange'; lo: number | null; hi: number | null }
  | { t: 'checkHeld' }
  | { t: 'reopenWith'; filter: 'bloom' | 'bloom4' | 'ribbon' | 'none'; compression: 'none' | 'snappy' | 'lz4' };

/** Keys of the fill space. Enough of them that live data spans several levels. */
export const FILL_KEYS = 700;
export const fillKey = (i: number): Bytes => Buffer.from(`f${String(i % FILL_KEYS).padStart(4, '0')}`);

export const fillArb: fc.Arbitrary<Fill> = fc.record({
  t: fc.constant('fill' as const),
  start: fc.nat({ max: FILL_KEYS - 1 }),
  count: fc.integer({ min: 20, max: 250 }),
  sequential: fc.boolean(),
  deletes: fc.constantFrom(0, 5, 20, 60),
  valueMax: fc.constantFrom(8, 60, 150, 400),
  compressible: fc.boolean(),
  turnEvery: fc.constantFrom(1, 4, 16, 1000),
  seed: fc.nat(),
});

const boundArb = fc.option(fc.nat({ max: FILL_KEYS - 1 }), { freq: 4, nil: null });

export const compactionCommandArb: fc.Arbitrary<CompactionCommand> = fc.oneof(
  { weight: 8, arbitrary: fillArb },
  { weight: 6, arbitrary: commandArb.filter((c) => c.t !== 'flush' && c.t !== 'reopen') },
  { weight: 3, arbitrary: fc.constant({ t: 'snapshot' as const }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('release' as const), snap: fc.nat({ max: 7 }) }) },
  { weight: 3, arbitrary: fc.constant({ t: 'checkHeld' as const }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('compactRange' as const), lo: boundArb, hi: boundArb }) },
  { weight: 1, arbitrary: fc.constant({ t: 'reopen' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('reopenWith' as const),
      filter: fc.constantFrom('bloom' as const, 'bloom4' as const, 'ribbon' as const, 'none' as const),
      compression: fc.constantFrom('none' as const, 'snappy' as const, 'lz4' as const),
    }),
  },
);

/** Tiny sizes: memtables of 1–4 KiB, files of 1–4 KiB, level 1 of 4–16 KiB, ×2–4 per level. */
export const compactionOptionsArb = fc
  .record({
    writeBufferSize: fc.constantFrom(1024, 2048, 4096),
    maxFileSize: fc.constantFrom(1024, 2048, 4096),
    maxBytesForLevelBase: fc.constantFrom(4096, 8192, 16384),
    levelMultiplier: fc.constantFrom(2, 3, 4),
    l0SlowdownTrigger: fc.constantFrom(2, 4, 8),
    l0StopExtra: fc.constantFrom(0, 2, 4),
    blockSize: fc.constantFrom(128, 512, 4096),
    compression: fc.constantFrom('none' as const, 'snappy' as const, 'lz4' as const),
    filterScope: fc.constantFrom('block' as const, 'table' as const),
    filter: fc.constantFrom('bloom' as const, 'ribbon' as const, 'none' as const),
  })
  .map(({ l0StopExtra, filter, ...o }) => ({
    ...o,
    l0CompactionTrigger: 2,
    l0StopTrigger: o.l0SlowdownTrigger + l0StopExtra,
    filterPolicy: policy(filter),
  }));

export function policy(name: 'bloom' | 'bloom4' | 'ribbon' | 'none'): OpenOptions['filterPolicy'] {
  return name === 'bloom' ? new BloomFilterPolicy(10) : name === 'bloom4' ? new BloomFilterPolicy(4) : name === 'ribbon' ? new RibbonFilterPolicy() : null;
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const hex = (b: Bytes): string => Buffer.from(b).toString('hex');

/** The writes of a fill, as model writes (generated up front, so the run is deterministic). */
export function fillWrites(f: Fill): Write[] {
  const next = rng(f.seed);
  const writes: Write[] = [];
  for (let i = 0; i < f.count; i++) {
    const key = fillKey(f.sequential ? f.start + i : Math.floor(next() * FILL_KEYS));
    if (next() * 100 < f.deletes) {
      writes.push({ t: 'del', key });
      continue;
    }
    const len = Math.floor(next() * (f.valueMax + 1));
    const value = new Uint8Array(len);
    if (f.compressible) value.fill(0x61 + (i % 26));
    else for (let j = 0; j < len; j++) value[j] = (next() * 256) | 0;
    writes.push({ t: 'put', key, value });
  }
  return writes;
}

export class CompactionRun extends ModelRun {
  deepestLevel = 0;
  compactions = 0;

  /** Records the deepest level holding files and the compactions so far (before a close). */
  observe(): void {
    for (let level = 6; level > this.deepestLevel; level--) {
      if (Number(this.db.getProperty(`sievekv.num-files-at-level${level}`)) > 0) {
        this.deepestLevel = level;
        break;
      }
    }
    const stats = JSON.parse(this.db.getProperty('sievekv.stats')!) as { levels: { compactions: number }[] };
    this.compactions = Math.max(this.compactions, stats.levels.reduce((s, l) => s + l.compactions, 0));
  }

  override async close(): Promise<void> {
    this.observe();
    await super.close();
  }

  async checkHeld(what: string): Promise<void> {
    for (const [i, h] of this.held.entries()) {
      const want = sortedEntries(h.state);
      const rows: [Bytes, Bytes][] = [];
      for await (const entry of this.db.iterator({ snapshot: h.snap })) rows.push(entry);
      expect(rows.map(([k, v]) => `${hex(k)}=${hex(v)}`), `${what}: scan at held snapshot ${i}`).toEqual(want.map(([k, v]) => `${hex(k)}=${hex(v)}`));
      const back: string[] = [];
      for (const [k] of this.db.iterator({ snapshot: h.snap, reverse: true })) back.push(hex(k));
      expect(back, `${what}: reverse scan at held snapshot ${i}`).toEqual(want.map(([k]) => hex(k)).reverse());
      // Point reads at the snapshot, including keys deleted or overwritten since.
      for (let k = 0; k < FILL_KEYS; k += 7) {
        const key = fillKey(k);
        const got = this.db.getSync(key, { snapshot: h.snap });
        const exp = h.state.get(hex(key))?.[1];
        expect(got === undefined ? 'undefined' : hex(got), `${what}: get ${key.toString()} at held snapshot ${i}`).toBe(exp === undefined ? 'undefined' : hex(exp));
      }
    }
  }

  async checkRange(lo: Bytes | undefined, hi: Bytes | undefined, what: string): Promise<void> {
    const inRange = (k: Bytes): boolean => (lo === undefined || Buffer.compare(k, lo) >= 0) && (hi === undefined || Buffer.compare(k, hi) <= 0);
    const want = sortedEntries(this.state).filter(([k]) => inRange(k));
    const rows: string[] = [];
    for await (const [k, v] of this.db.iterator({ ...(lo ? { gte: lo } : {}), ...(hi ? { lte: hi } : {}) })) rows.push(`${hex(k)}=${hex(v)}`);
    expect(rows, `${what}: scan of the compacted range`).toEqual(want.map(([k, v]) => `${hex(k)}=${hex(v)}`));
  }

  async runCompactionCommand(cmd: CompactionCommand): Promise<void> {
    switch (cmd.t) {
      case 'fill': {
        const what = `step ${this.step++} fill`;
        const writes = fillWrites(cmd);
        for (const [i, w] of writes.entries()) {
          if (i % 11 === 5 && w.t === 'put') this.db.putSync(w.key, w.value);
          else if (w.t === 'put') await this.db.put(w.key, w.value);
          else if (w.t === 'del') await this.db.del(w.key);
          applyWrite(this.state, w);
          if ((i + 1) % cmd.turnEvery === 0) await turn();
        }
        await this.checkKeys(writes.filter((w, i) => i % 5 === 0 && w.t !== 'batch').map((w) => (w as { key: Bytes }).key), what);
        this.observe();
        break;
      }
      case 'compactRange': {
        const what = `step ${this.step++} compactRange`;
        let lo = cmd.lo === null ? undefined : fillKey(cmd.lo);
        let hi = cmd.hi === null ? undefined : fillKey(cmd.hi);
        if (lo !== undefined && hi !== undefined && Buffer.compare(lo, hi) > 0) [lo, hi] = [hi, lo];
        await this.db.compactRange(lo, hi);
        await this.checkRange(lo, hi, what);
        this.observe();
        break;
      }
      case 'checkHeld':
        await this.checkHeld(`step ${this.step++} checkHeld`);
        break;
      case 'reopenWith': {
        const what = `step ${this.step++} reopenWith ${cmd.filter}/${cmd.compression}`;
        await this.close();
        const options = this.options as OpenOptions;
        options.filterPolicy = policy(cmd.filter);
        options.compression = cmd.compression;
        await this.open();
        await this.checkAll(what);
        break;
      }
      default:
        await this.run(cmd);
    }
  }
}

/** Runs `commands`, checking every step, then the whole state and every held snapshot. */
export async function runCompactionModel(dir: string, options: OpenOptions, commands: readonly CompactionCommand[]): Promise<CompactionRun> {
  const run = new CompactionRun(dir, { ...options });
  await run.open();
  try {
    for (const cmd of commands) await run.runCompactionCommand(cmd);
    // Let the background settle, then everything must still agree.
    for (let i = 0; i < 20; i++) await turn();
    await run.checkHeld('end');
    await run.checkAll('end');
  } finally {
    await run.close();
  }
  return run;
}

export const commandsArb = fc.array(compactionCommandArb, { minLength: 10, maxLength: 40, size: 'max' });
