/**
 * I/O failures through FaultyFileSystem: a failed WAL append (also a torn, half-written one), a
 * failed WAL sync (also under group commit), a failed table write or sync during a flush, a failed
 * MANIFEST write. Each time: the failing write rejects with IO_ERROR, later writes fail with the
 * latched error, reads still work, close works, and reopening on the inner file system recovers
 * every acknowledged write (and the failed one fully or not at all). A crash after the failure is
 * tried too: the database is reopened on crash clones of the inner file system (the deterministic
 * one and seeded harsh ones that keep random prefixes of unsynced bytes and random unsynced names),
 * where bytes whose fsync failed may be gone: every acknowledged synced write must be there, the
 * rest a prefix in commit order, and the failed write whole or absent. Then a property: a fault at
 * a random write-side operation, under a random workload, keeps the same promises, on the live file
 * system and on crash clones.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DB, type BatchOperation } from '../../src/db.js';
import { isSieveError, type SieveError } from '../../src/errors.js';
import { FaultyFileSystem, type Fault, type FsOperation } from '../../src/fs/faulty-fs.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { writeArb, type Write } from '../model/db-model.js';
import { rng, testSeed } from '../support/seed.js';
import { contents, issue, WriteOutcomes } from '../support/write-outcomes.js';

const OPTIONS = { writeBufferSize: 4096, blockSize: 256 } as const;

async function rejection(p: Promise<unknown>): Promise<SieveError> {
  try {
    await p;
  } catch (err) {
    if (isSieveError(err)) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

function thrown(f: () => unknown): SieveError {
  try {
    f();
  } catch (err) {
    if (isSieveError(err)) return err;
    throw err;
  }
  throw new Error('expected a throw');
}

async function scan(db: DB): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const [k, v] of db.iterator()) out.set(k.toString(), v.toString());
  return out;
}

interface Setup {
  mem: MemFileSystem;
  fs: FaultyFileSystem;
  db: DB;
  /** Acknowledged writes of distinct keys, in commit order. */
  acked: Map<string, string>;
  /** How many of `acked`, from the first, are durable (up to the last synced one). */
  durable: number;
}

/** Records an acknowledged write in `s` (a synced one makes every earlier write durable). */
function ack(s: Setup, key: string, value: string, sync: boolean): void {
  s.acked.set(key, value);
  if (sync) s.durable = s.acked.size;
}

/** A database on a faulty memory file system, with `n` acknowledged writes `k<i>` = `v<i>`, every third synced. */
async function setup(n = 20): Promise<Setup> {
  const mem = new MemFileSystem();
  const fs = new FaultyFileSystem(mem);
  const db = await DB.open('/db', { ...OPTIONS, fs });
  const s: Setup = { mem, fs, db, acked: new Map(), durable: 0 };
  for (let i = 0; i < n; i++) {
    await db.put(`k${i}`, `v${i}`, { sync: i % 3 === 0 });
    ack(s, `k${i}`, `v${i}`, i % 3 === 0);
  }
  return s;
}

/** Seeds of the harsh crash clones each check opens (derived from SIEVE_SEED, printed on failure). */
const CRASH_SEEDS = [1, 2, 3].map((i) => (testSeed() * 31 + i) | 0);

/** The crash images of `mem` a check opens: the deterministic one, then harsh ones. */
function crashImages(mem: MemFileSystem): { what: string; image: MemFileSystem }[] {
  return [
    { what: 'crashClone()', image: mem.crashClone() },
    ...CRASH_SEEDS.map((seed) => ({ what: `crashClone({ rng: rng(${seed}) }) (SIEVE_SEED=${testSeed()})`, image: mem.crashClone({ rng: rng(seed) }) })),
  ];
}

/**
 * Opens each crash image of `mem`, which must succeed and show the first p of `acked` (p at least
 * `durable`), or all of `acked` and then all of `failed`; the image must then take a write.
 */
async function expectCrashImagesRecover(mem: MemFileSystem, acked: Map<string, string>, durable: number, failed: Map<string, string>): Promise<void> {
  const order = [...acked];
  const legal = new Set<string>();
  for (let p = durable; p <= order.length; p++) legal.add(JSON.stringify(order.slice(0, p).sort()));
  legal.add(JSON.stringify([...order, ...failed].sort()));
  for (const { what, image } of crashImages(mem)) {
    let db: DB;
    try {
      db = await DB.open('/db', { ...OPTIONS, fs: image });
    } catch (err) {
      throw new Error(`${what}: the crash image does not open: ${String(err)}`, { cause: err });
    }
    const seen = JSON.stringify([...(await scan(db))].sort());
    expect(legal.has(seen), `${what}: recovered ${seen}; want the first ${durable}..${order.length} acknowledged writes (or all, plus the failed one)`).toBe(true);
    await db.put('after', 'crash', { sync: true });
    await db.close();
  }
}

/**
 * The common promises after `failing` rejected: IO_ERROR, latched for later writes (async and
 * sync twins, flush too), reads still answer `acked`, close works, and the inner file system
 * reopens holding `acked` plus, all or nothing, `failed`.
 */
async function expectLatchedAndRecoverable(setupResult: Setup, failing: Promise<void>, failed: Map<string, string>): Promise<void> {
  const { mem, fs, db, acked, durable } = setupResult;
  const err = await rejection(failing);
  expect(err.code).toBe('IO_ERROR');
  fs.clearFaults(); // the disk is fine again, but the database stays stopped
  const later = await rejection(db.put('later', 'x'));
  expect(later.code).toBe('IO_ERROR');
  expect(later.message).toBe(err.message);
  expect(thrown(() => db.putSync('later', 'x')).message).toBe(err.message);
  expect((await rejection(db.batch([{ type: 'del', key: 'k0' }], { sync: true }))).message).toBe(err.message);
  expect((await rejection(db.compactRange())).message).toBe(err.message);
  // Reads go on, and see the acknowledged writes only.
  for (const [k, v] of acked) expect((await db.get(k))?.toString(), k).toBe(v);
  for (const k of failed.keys()) if (!acked.has(k)) expect(await db.get(k), k).toBeUndefined();
  expect(await scan(db)).toEqual(acked);
  expect(db.getProperty('sievekv.num-files-at-level0')).toMatch(/^\d+$/);
  await db.close();
  // A crash now: the images open, with every durable write and a prefix of the rest.
  await expectCrashImagesRecover(mem, acked, durable, failed);
  // Reopen on the healthy inner file system: acknowledged writes all there, the failed one whole or absent.
  const again = await DB.open('/db', { ...OPTIONS, fs: mem });
  const seen = await scan(again);
  const withFailed = new Map([...acked, ...failed]);
  expect([acked, withFailed].some((m) => JSON.stringify([...m].sort()) === JSON.stringify([...seen].sort())), JSON.stringify([...seen])).toBe(true);
  await again.put('after', 'reopen', { sync: true });
  expect(again.getSync('after')?.toString()).toBe('reopen');
  await again.close();
}

const bigBatch = (prefix: string, n: number, size: number): BatchOperation[] =>
  Array.from({ length: n }, (_, i) => ({ type: 'put' as const, key: `${prefix}${i}`, value: `${prefix}${i}:`.padEnd(size, '#') }));

describe('a failed WAL append', () => {
  it('rejects with IO_ERROR and latches; reopening keeps every acknowledged write', async () => {
    const s = await setup();
    s.fs.inject({ ops: ['append'], path: /\.log$/ });
    await expectLatchedAndRecoverable(s, s.db.put('failed', 'write'), new Map([['failed', 'write']]));
  });

  it('torn (half the record written) spanning several log blocks: the batch is all or nothing', async () => {
    const s = await setup();
    const ops = bigBatch('big', 40, 2000); // ~80 KB: a record over three 32 KiB blocks
    s.fs.inject({ ops: ['append'], path: /\.log$/, partial: true });
    await expectLatchedAndRecoverable(s, s.db.batch(ops), new Map(ops.map((o) => [o.key as string, (o as { value: string }).value])));
  });

  it('synchronous twin: putSync throws IO_ERROR and latches', async () => {
    const s = await setup();
    s.fs.inject({ ops: ['append'], path: /\.log$/, partial: true });
    const err = thrown(() => s.db.putSync('failed', 'sync-twin', { sync: true }));
    await expectLatchedAndRecoverable(s, Promise.reject(err), new Map([['failed', 'sync-twin']]));
  });
});

describe('a failed WAL sync', () => {
  it('rejects the synced write with IO_ERROR and latches', async () => {
    const s = await setup();
    s.fs.inject({ ops: ['sync'], path: /\.log$/ });
    await expectLatchedAndRecoverable(s, s.db.put('failed', 'sync', { sync: true }), new Map([['failed', 'sync']]));
  });

  it('under group commit: every writer of the failed group rejects, and the group is all or nothing', async () => {
    const s = await setup();
    // The first synced write's fdatasync succeeds; the five issued while it is pending form the
    // next group (one WAL record), whose fdatasync fails.
    s.fs.inject({ ops: ['sync'], path: /\.log$/, after: 1 });
    const first = s.db.put('first', 'ok', { sync: true });
    const writes = Array.from({ length: 5 }, (_, i) => s.db.put(`g${i}`, `group${i}`, { sync: i % 2 === 0 }));
    await first;
    ack(s, 'first', 'ok', true);
    const errors = await Promise.all(writes.map((p) => rejection(p)));
    for (const e of errors) expect(e.code).toBe('IO_ERROR');
    const failed = new Map(Array.from({ length: 5 }, (_, i) => [`g${i}`, `group${i}`] as [string, string]));
    await expectLatchedAndRecoverable(s, Promise.reject(errors[0]), failed);
  });
});

describe('a failed flush', () => {
  it('table write fails during compactRange: IO_ERROR, latched, nothing lost', async () => {
    const s = await setup();
    s.fs.inject({ ops: ['append'], path: /\.ldb$/ });
    await expectLatchedAndRecoverable(s, s.db.compactRange(), new Map());
  });

  it('table sync fails during a flush a full memtable starts: the write that needed room fails', async () => {
    const s = await setup(0);
    s.fs.inject({ ops: ['sync'], path: /\.ldb$/ });
    let failing: Promise<void> | undefined;
    let i = 0;
    // Write until a write triggers the flush (the memtable fills at writeBufferSize).
    for (; i < 1000 && failing === undefined; i++) {
      const p = s.db.put(`f${i}`, `value-${i}`.padEnd(100, '.'));
      try {
        await p;
        ack(s, `f${i}`, `value-${i}`.padEnd(100, '.'), false);
      } catch {
        failing = p;
      }
    }
    expect(failing, 'a flush happened').toBeDefined();
    await expectLatchedAndRecoverable(s, failing!, new Map([[`f${i - 1}`, `value-${i - 1}`.padEnd(100, '.')]]));
  });

  it('MANIFEST write fails while recording the flushed table', async () => {
    const s = await setup();
    s.fs.inject({ ops: ['append', 'sync'], path: /MANIFEST/ });
    await expectLatchedAndRecoverable(s, s.db.compactRange(), new Map());
  });

  it('a torn MANIFEST record (half written) is dropped on reopen', async () => {
    const s = await setup();
    s.fs.inject({ ops: ['append'], path: /MANIFEST/, partial: true });
    await expectLatchedAndRecoverable(s, s.db.compactRange(), new Map());
  });

  it('creating the new WAL fails at a memtable switch', async () => {
    const s = await setup();
    s.fs.inject({ ops: ['create'], path: /\.log$/ });
    await expectLatchedAndRecoverable(s, s.db.compactRange(), new Map());
  });
});

describe('a failed read', () => {
  it('rejects the read with IO_ERROR, does not stop the database, and later reads succeed', async () => {
    const s = await setup();
    await s.db.compactRange(); // the keys now live in a table
    const disarm = s.fs.inject({ ops: ['read'], path: /\.ldb$/, sticky: true });
    const err = await rejection(s.db.get('k1'));
    expect(err.code).toBe('IO_ERROR');
    disarm();
    expect((await s.db.get('k1'))?.toString()).toBe('v1');
    await s.db.put('still', 'writable');
    expect((await s.db.get('still'))?.toString()).toBe('writable');
    await s.db.close();
  });
});

describe('a failure while opening', () => {
  it.each(['create', 'append', 'sync', 'rename', 'syncDir'] as FsOperation[])('%s fails: open rejects IO_ERROR, releases the lock, and a later open recovers', async (op) => {
    const s = await setup();
    await s.db.put('unflushed', 'x'); // in the WAL: recovery flushes it (tables, MANIFEST, CURRENT)
    ack(s, 'unflushed', 'x', false);
    await s.db.close();
    s.fs.inject({ ops: [op], path: /^\/db(\/(?!LOG)|$)/ });
    const err = await rejection(DB.open('/db', { ...OPTIONS, fs: s.fs }));
    expect(err.code).toBe('IO_ERROR');
    s.fs.clearFaults();
    await expectCrashImagesRecover(s.mem, s.acked, s.durable, new Map());
    const db = await DB.open('/db', { ...OPTIONS, fs: s.fs });
    expect(await scan(db)).toEqual(s.acked);
    await db.close();
  });
});

// -------------------------------------------------------------------------------------------
// Random faults

const WRITE_SIDE: FsOperation[] = ['create', 'append', 'sync', 'rename', 'syncDir', 'remove'];

type Action = { t: 'write'; w: Write; sync: boolean } | { t: 'group'; writes: { w: Write; sync: boolean }[] } | { t: 'flush' };

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ t: fc.constant('write' as const), w: writeArb, sync: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('group' as const), writes: fc.array(fc.record({ w: writeArb, sync: fc.boolean() }), { minLength: 2, maxLength: 5 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ t: 'flush' as const }) },
);

const faultArb: fc.Arbitrary<Fault> = fc.record({
  ops: fc.subarray(WRITE_SIDE, { minLength: 1 }),
  after: fc.nat({ max: 60 }),
  sticky: fc.boolean(),
  partial: fc.boolean(),
  errno: fc.constantFrom('EIO', 'ENOSPC'),
});

describe('a fault at a random write-side operation', () => {
  it('never loses an acknowledged write, never applies half a batch, and leaves reads, close and reopen working', async () => {
    await fc.assert(
      fc.asyncProperty(faultArb, fc.array(actionArb, { minLength: 5, maxLength: 60, size: 'max' }), fc.integer(), async (fault, actions, crashSeed) => {
        const mem = new MemFileSystem();
        const fs = new FaultyFileSystem(mem);
        let db = await DB.open('/db', { ...OPTIONS, fs });
        fs.inject(fault);
        const outcomes = new WriteOutcomes();
        // Once a write or flush failed, the database is stopped: every later one must fail too
        // (and so changes nothing).
        let latched = false;
        for (const action of actions) {
          const writes = action.t === 'write' ? [action] : action.t === 'group' ? action.writes : [];
          if (action.t === 'flush') {
            try {
              await db.compactRange();
              expect(latched, 'a flush after a failure must fail').toBe(false);
              outcomes.allDurable();
            } catch (err) {
              expect(isSieveError(err, 'IO_ERROR'), String(err)).toBe(true);
              latched = true;
            }
            continue;
          }
          const wasLatched = latched;
          const results = await Promise.allSettled(writes.map(({ w, sync }) => issue(db, w, sync)));
          results.forEach((r, i) => {
            if (r.status === 'fulfilled') {
              expect(wasLatched, 'a write after a failure must fail').toBe(false);
              outcomes.acked(writes[i]!.w, writes[i]!.sync);
            } else {
              expect(isSieveError(r.reason, 'IO_ERROR'), String(r.reason)).toBe(true);
              if (!wasLatched) outcomes.failed(writes[i]!.w);
              latched = true;
            }
          });
        }
        fs.clearFaults();
        // Reads still work and show a legal state.
        const live = outcomes.liveStates();
        expect(live.has(await contents(db)), 'live reads show a legal state').toBe(true);
        await db.close();
        // A crash now: bytes whose fsync failed, and anything unsynced, may be gone.
        const crashed = outcomes.crashStates();
        for (const [what, image] of [
          ['crashClone()', mem.crashClone()],
          [`crashClone({ rng: rng(${crashSeed}) })`, mem.crashClone({ rng: rng(crashSeed) })],
        ] as const) {
          const recovered = await DB.open('/db', { ...OPTIONS, fs: image });
          expect(crashed.has(await contents(recovered)), `${what}: a legal state after a crash (a write failed: ${latched})`).toBe(true);
          await recovered.close();
        }
        db = await DB.open('/db', { ...OPTIONS, fs: mem });
        expect(live.has(await contents(db)), `after reopen (a write failed: ${latched})`).toBe(true);
        await db.put('after', 'reopen');
        expect(db.getSync('after')?.toString()).toBe('reopen');
        await db.close();
      }),
      { numRuns: 200 },
    );
  });
});
