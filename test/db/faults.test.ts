/**
 * I/O failures through FaultyFileSystem: a failed WAL append (also a torn, half-written one), a
 * failed WAL sync (also under group commit), a failed table write or sync during a flush, a failed
 * MANIFEST write. Each time: the failing write rejects with IO_ERROR, later writes fail with the
 * latched error, reads still work, close works, and reopening on the inner file system recovers
 * every acknowledged write (and the failed one fully or not at all). Then a property: a fault at a
 * random write-side operation, under a random workload, keeps the same promises.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DB, type BatchOperation } from '../../src/db.js';
import { isSieveError, type SieveError } from '../../src/errors.js';
import { FaultyFileSystem, type Fault, type FsOperation } from '../../src/fs/faulty-fs.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { applyWrite, sortedEntries, writeArb, type State, type Write } from '../model/db-model.js';

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

/** A database on a faulty memory file system, with `n` acknowledged writes `k<i>` = `v<i>`. */
async function setup(n = 20): Promise<{ mem: MemFileSystem; fs: FaultyFileSystem; db: DB; acked: Map<string, string> }> {
  const mem = new MemFileSystem();
  const fs = new FaultyFileSystem(mem);
  const db = await DB.open('/db', { ...OPTIONS, fs });
  const acked = new Map<string, string>();
  for (let i = 0; i < n; i++) {
    await db.put(`k${i}`, `v${i}`, { sync: i % 3 === 0 });
    acked.set(`k${i}`, `v${i}`);
  }
  return { mem, fs, db, acked };
}

/**
 * The common promises after `failing` rejected: IO_ERROR, latched for later writes (async and
 * sync twins, flush too), reads still answer `acked`, close works, and the inner file system
 * reopens holding `acked` plus, all or nothing, `failed`.
 */
async function expectLatchedAndRecoverable(
  setupResult: { mem: MemFileSystem; fs: FaultyFileSystem; db: DB; acked: Map<string, string> },
  failing: Promise<void>,
  failed: Map<string, string>,
): Promise<void> {
  const { mem, fs, db, acked } = setupResult;
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
    s.acked.set('first', 'ok');
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
        s.acked.set(`f${i}`, `value-${i}`.padEnd(100, '.'));
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
    s.acked.set('unflushed', 'x');
    await s.db.close();
    s.fs.inject({ ops: [op], path: /^\/db(\/(?!LOG)|$)/ });
    const err = await rejection(DB.open('/db', { ...OPTIONS, fs: s.fs }));
    expect(err.code).toBe('IO_ERROR');
    s.fs.clearFaults();
    const db = await DB.open('/db', { ...OPTIONS, fs: s.fs });
    expect(await scan(db)).toEqual(s.acked);
    await db.close();
  });
});

// -------------------------------------------------------------------------------------------
// Random faults

const WRITE_SIDE: FsOperation[] = ['create', 'append', 'sync', 'rename', 'syncDir', 'remove'];

const fingerprint = (state: State): string =>
  JSON.stringify(sortedEntries(state).map(([k, v]) => [Buffer.from(k).toString('hex'), Buffer.from(v).toString('hex')]));

async function contents(db: DB): Promise<string> {
  const rows: [string, string][] = [];
  for await (const [k, v] of db.iterator()) rows.push([k.toString('hex'), v.toString('hex')]);
  return JSON.stringify(rows);
}

function issue(db: DB, w: Write, sync: boolean): Promise<void> {
  if (w.t === 'put') return db.put(w.key, w.value, { sync });
  if (w.t === 'del') return db.del(w.key, { sync });
  return db.batch(
    w.ops.map((op) => (op.t === 'put' ? { type: 'put', key: op.key, value: op.value } : { type: 'del', key: op.key })),
    { sync },
  );
}

/** The states the database may legally show: acknowledged writes applied, each failed one or not. */
class Outcomes {
  states: State[] = [new Map()];

  acked(w: Write): void {
    for (const s of this.states) applyWrite(s, w);
  }

  failed(w: Write): void {
    const next = new Map<string, State>();
    for (const s of this.states) {
      const applied = new Map(s);
      applyWrite(applied, w);
      next.set(fingerprint(s), s);
      next.set(fingerprint(applied), applied);
    }
    this.states = [...next.values()];
  }

  has(fp: string): boolean {
    return this.states.some((s) => fingerprint(s) === fp);
  }
}

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
      fc.asyncProperty(faultArb, fc.array(actionArb, { minLength: 5, maxLength: 60, size: 'max' }), async (fault, actions) => {
        const mem = new MemFileSystem();
        const fs = new FaultyFileSystem(mem);
        let db = await DB.open('/db', { ...OPTIONS, fs });
        fs.inject(fault);
        const outcomes = new Outcomes();
        // Once a write or flush failed, the database is stopped: every later one must fail too
        // (and so changes nothing).
        let latched = false;
        for (const action of actions) {
          const writes = action.t === 'write' ? [action] : action.t === 'group' ? action.writes : [];
          if (action.t === 'flush') {
            try {
              await db.compactRange();
              expect(latched, 'a flush after a failure must fail').toBe(false);
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
              outcomes.acked(writes[i]!.w);
            } else {
              expect(isSieveError(r.reason, 'IO_ERROR'), String(r.reason)).toBe(true);
              if (!wasLatched) outcomes.failed(writes[i]!.w);
              latched = true;
            }
          });
        }
        fs.clearFaults();
        // Reads still work and show a legal state.
        expect(outcomes.has(await contents(db)), 'live reads show a legal state').toBe(true);
        await db.close();
        db = await DB.open('/db', { ...OPTIONS, fs: mem });
        expect(outcomes.has(await contents(db)), `after reopen (a write failed: ${latched})`).toBe(true);
        await db.put('after', 'reopen');
        expect(db.getSync('after')?.toString()).toBe('reopen');
        await db.close();
      }),
      { numRuns: 200 },
    );
  });
});
