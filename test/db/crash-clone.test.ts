/**
 * Power cuts on MemFileSystem: random sequences of synced and unsynced writes (one at a time and
 * several in flight), flushes and reopens, with `crashClone()` — what a crash would leave: synced
 * bytes, directory-synced names — taken at random points, sometimes while writes are still in
 * flight. Most runs crash the harsh way (`crashClone({ rng })`, seeded by the run): each file also
 * keeps any prefix of its unsynced bytes, sometimes followed by zeros (a torn WAL tail, cut
 * anywhere in a record or its header), files decide independently, and each name changed since
 * its directory's last sync survives or not. Opening the clone must succeed and show the state after some prefix of the writes, no
 * older than the last write acknowledged as durable (a synced write, a flush, a reopen) and no
 * newer than the crash point: every acknowledged synced write kept, no batch half applied. The
 * run then goes on either on the original or on the crashed copy (so a recovery gets crashed too).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DB, type BatchOperation, type OpenOptions } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { rng } from '../support/seed.js';
import type { RegionRouter } from '../../src/shard/region-router.js';
import { applyWrite, sortedEntries, writeArb, type State, type Write } from '../model/db-model.js';

type Step =
  | { t: 'write'; w: Write; sync: boolean }
  | { t: 'inflight'; writes: { w: Write; sync: boolean }[]; crashAt: number; adopt: boolean }
  | { t: 'flush' }
  | { t: 'reopen' }
  | { t: 'crash'; adopt: boolean };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ t: fc.constant('write' as const), w: writeArb, sync: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('inflight' as const),
      writes: fc.array(fc.record({ w: writeArb, sync: fc.boolean() }), { minLength: 1, maxLength: 5 }),
      crashAt: fc.nat({ max: 5 }),
      adopt: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ t: 'flush' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'reopen' as const }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('crash' as const), adopt: fc.boolean() }) },
);

const fingerprint = (state: State): string =>
  sortedEntries(state)
    .map(([k, v]) => `${Buffer.from(k).toString('hex')}=${Buffer.from(v).toString('hex')}`)
    .join(',');

async function contents(db: DB): Promise<string> {
  const rows: string[] = [];
  for await (const [k, v] of db.iterator()) rows.push(`${k.toString('hex')}=${v.toString('hex')}`);
  return rows.join(',');
}

function issue(db: DB, w: Write, sync: boolean): Promise<void> {
  if (w.t === 'put') return db.put(w.key, w.value, { sync });
  if (w.t === 'del') return db.del(w.key, { sync });
  const ops: BatchOperation[] = w.ops.map((op) => (op.t === 'put' ? { type: 'put', key: op.key, value: op.value } : { type: 'del', key: op.key }));
  return db.batch(ops, { sync });
}

/**
 * The writes so far as model states: `states[i]` is the state after the first i writes (in
 * commit order); recovery may show any of states[durable..].
 */
class History {
  states: string[];
  state: State;
  durable = 0;

  constructor(state: State = new Map()) {
    this.state = new Map(state);
    this.states = [fingerprint(this.state)];
  }

  apply(w: Write): void {
    applyWrite(this.state, w);
    this.states.push(fingerprint(this.state));
  }

  markDurable(): void {
    this.durable = this.states.length - 1;
  }

  /** The index of `seen` among the states a crash may leave, or -1. */
  find(seen: string): number {
    for (let i = this.states.length - 1; i >= this.durable; i--) if (this.states[i] === seen) return i;
    return -1;
  }
}

/** Three regions (shared WAL and MANIFEST, a memtable and tables each), for the sharded layout. */
const THREE_REGIONS: RegionRouter = {
  name: 'test.first-byte-mod-3',
  regions: [0, 1, 2],
  regionOf: (key) => (key.length === 0 ? 0 : key[0]! % 3),
};

const SMALL: OpenOptions = { writeBufferSize: 1024, blockSize: 256 };

/** Opens the crash image, checks it against `history`, and returns it (open) with its model. */
async function recoverAndCheck(image: MemFileSystem, history: History, what: string, options: OpenOptions): Promise<{ db: DB; state: State }> {
  const db = await DB.open('/db', { ...options, fs: image });
  const seen = await contents(db);
  const at = history.find(seen);
  expect(
    at,
    `${what}: recovered state is none of the ${history.states.length - history.durable} allowed (durable from write ${history.durable} of ${history.states.length - 1})`,
  ).toBeGreaterThanOrEqual(0);
  // Rebuild the model of what was recovered from the database itself (it equals states[at]).
  const state: State = new Map();
  for await (const [k, v] of db.iterator()) state.set(k.toString('hex'), [k, v]);
  return { db, state };
}

/**
 * How the run crashes: null, the deterministic crash (only what was synced); a number, the seed of
 * the harsh crashes (torn unsynced bytes, zero fill, unsynced names kept or not).
 */
const crashSeedArb = fc.option(fc.integer(), { freq: 4, nil: null });

async function runSteps(steps: readonly Step[], strictNames: boolean, options: OpenOptions, crashSeed: number | null): Promise<void> {
  const next = crashSeed === null ? undefined : rng(crashSeed);
  const crash = (from: MemFileSystem): MemFileSystem => (next === undefined ? from.crashClone() : from.crashClone({ rng: next, zeroFill: 0.25 }));
  let fs = new MemFileSystem({ strictNames });
  let db = await DB.open('/db', { ...options, fs });
  let history = new History();
  history.markDurable(); // the empty database
  try {
    for (const [i, step] of steps.entries()) {
      const what = `step ${i} ${step.t}`;
      switch (step.t) {
        case 'write':
          await issue(db, step.w, step.sync);
          history.apply(step.w);
          if (step.sync) history.markDurable();
          break;
        case 'flush':
          await db.compactRange();
          history.markDurable();
          break;
        case 'reopen':
          await db.close();
          db = await DB.open('/db', { ...options, fs });
          history.markDurable(); // recovery wrote what the WAL held to a table
          break;
        case 'crash':
        case 'inflight': {
          let image: MemFileSystem;
          let allowed = history;
          if (step.t === 'inflight') {
            // Issue the writes; crash after `crashAt` of them were issued (none acknowledged yet).
            const pending: Promise<void>[] = [];
            image = crash(fs);
            for (const [j, { w, sync }] of step.writes.entries()) {
              if (j === step.crashAt) image = crash(fs);
              pending.push(issue(db, w, sync));
            }
            if (step.crashAt >= step.writes.length) image = crash(fs);
            // The image may hold any prefix of the issued writes, so check against a history
            // that includes all of them, durable only up to what was acknowledged before.
            allowed = new History();
            allowed.states = [...history.states];
            allowed.durable = history.durable;
            allowed.state = new Map(history.state);
            for (const { w } of step.writes.slice(0, step.crashAt)) allowed.apply(w);
            await Promise.all(pending);
            for (const { w, sync } of step.writes) {
              history.apply(w);
              if (sync) history.markDurable();
            }
          } else {
            image = crash(fs);
          }
          const recovered = await recoverAndCheck(image, allowed, what, options);
          if (step.adopt) {
            // Go on from the crashed copy: the database there is the one that counts now.
            await db.close();
            db = recovered.db;
            fs = image;
            history = new History(recovered.state);
            history.markDurable();
          } else {
            await recovered.db.close();
          }
          break;
        }
      }
    }
    // A last crash at the end, and the survivor must also take writes.
    const { db: last } = await recoverAndCheck(crash(fs), history, 'final crash', options);
    await last.put('after', 'crash', { sync: true });
    expect(last.getSync('after')?.toString()).toBe('crash');
    await last.close();
  } finally {
    await db.close();
  }
}

describe('crashClone at random points', () => {
  it('recovers a state between the last durable write and the crash, never half a batch', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 5, maxLength: 70, size: 'max' }), fc.boolean(), crashSeedArb, async (steps, strictNames, crashSeed) => {
        await runSteps(steps, strictNames, SMALL, crashSeed);
      }),
      { numRuns: 250 },
    );
  });

  it('the same with three regions sharing the WAL and MANIFEST', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 5, maxLength: 70, size: 'max' }), fc.boolean(), crashSeedArb, async (steps, strictNames, crashSeed) => {
        await runSteps(steps, strictNames, { ...SMALL, router: THREE_REGIONS }, crashSeed);
      }),
      { numRuns: 100 },
    );
  });
});
