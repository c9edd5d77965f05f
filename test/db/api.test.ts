/**
 * The public API's contract at its edges: typed errors for bad options, bad keys and values,
 * calls after close, a second open, createIfMissing/errorIfExists, released snapshots — and in
 * each case nothing written. Properties (level file counts, memory, the distinct-key estimate,
 * the filter counters), and the synchronous twins agreeing with the async methods.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB, type OpenOptions } from '../../src/db.js';
import type { ErrorCode } from '../../src/errors.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import type { RegionRouter } from '../../src/shard/region-router.js';
import { codeOf } from '../support/error-code.js';


/** Async methods report by rejecting, never by throwing synchronously. */
function rejectsWithoutThrowing(f: () => Promise<unknown>): Promise<ErrorCode | 'none'> {
  let p: Promise<unknown>;
  try {
    p = f();
  } catch (err) {
    throw new Error(`threw synchronously instead of rejecting: ${String(err)}`);
  }
  return codeOf(() => p);
}

async function dump(db: DB): Promise<string[]> {
  const rows: string[] = [];
  for await (const [k, v] of db.iterator()) rows.push(`${k.toString('hex')}=${v.toString('hex')}`);
  return rows;
}

const lastSequence = (db: DB): number => JSON.parse(db.getProperty('sievekv.stats')!).lastSequence as number;

async function seeded(options: OpenOptions = {}): Promise<{ db: DB; fs: MemFileSystem }> {
  const fs = new MemFileSystem();
  const db = await DB.open('/db', { fs, ...options });
  await db.put('a', '1');
  await db.put('b', '2');
  return { db, fs };
}

describe('bad options', () => {
  const cases: [string, Record<string, unknown>][] = [
    ['unknown option', { writeBuferSize: 4096 }],
    ['wrong type (boolean)', { createIfMissing: 'yes' }],
    ['wrong type (number)', { writeBufferSize: '4096' }],
    ['not an integer', { blockSize: 4096.5 }],
    ['below the minimum', { writeBufferSize: 1 }],
    ['above the maximum', { writeBufferSize: 2 ** 31 }],
    ['negative', { blockCacheSize: -1 }],
    ['NaN', { maxOpenFiles: Number.NaN }],
    ['unknown compression', { compression: 'zstd' }],
    ['unknown filter scope', { filterScope: 'row' }],
    ['not a filter policy', { filterPolicy: { name: 'x' } }],
    ['not a file system', { fs: {} }],
    ['inconsistent triggers', { l0CompactionTrigger: 10, l0SlowdownTrigger: 5 }],
    ['no background thread', { backgroundThreads: 0 }],
    ['three background threads', { backgroundThreads: 3 }],
    ['unknown background priority', { backgroundPriority: 'idle' }],
  ];
  it.each(cases)('%s: INVALID_ARGUMENT and nothing created', async (_, bad) => {
    const fs = new MemFileSystem();
    expect(await rejectsWithoutThrowing(() => DB.open('/db', { fs, ...bad } as OpenOptions))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => DB.openSync('/db', { fs, ...bad } as OpenOptions))).toBe('INVALID_ARGUMENT');
    expect(fs.exists('/db')).toBe(false);
  });

  it('options that are not an object, and a bad directory argument', async () => {
    expect(await codeOf(() => DB.open('/db', 42 as unknown as OpenOptions))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => DB.open('', { fs: new MemFileSystem() }))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => DB.open(7 as unknown as string, { fs: new MemFileSystem() }))).toBe('INVALID_ARGUMENT');
  });
});

describe('keys and values of the wrong type', () => {
  const bads: [string, unknown][] = [
    ['a number', 42],
    ['null', null],
    ['undefined', undefined],
    ['an object', { a: 1 }],
    ['an array', [1, 2]],
    ['a boolean', true],
    ['an ArrayBuffer', new ArrayBuffer(2)],
  ];

  it.each(bads)('%s: INVALID_ARGUMENT from every method, and the database is unchanged', async (_, bad) => {
    const { db } = await seeded();
    const before = await dump(db);
    const seq = lastSequence(db);
    const k = bad as string;
    expect(await rejectsWithoutThrowing(() => db.put(k, 'v'))).toBe('INVALID_ARGUMENT');
    expect(await rejectsWithoutThrowing(() => db.put('c', k))).toBe('INVALID_ARGUMENT');
    expect(await rejectsWithoutThrowing(() => db.del(k))).toBe('INVALID_ARGUMENT');
    expect(await rejectsWithoutThrowing(() => db.get(k))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => db.putSync(k, 'v'))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => db.putSync('c', k))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => db.delSync(k))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => db.getSync(k))).toBe('INVALID_ARGUMENT');
    // A bad operation anywhere in a batch: none of the batch is written.
    const batches = [
      [{ type: 'put', key: 'c', value: '3' }, { type: 'put', key: k, value: 'v' }],
      [{ type: 'put', key: 'c', value: '3' }, { type: 'put', key: 'd', value: k }],
      [{ type: 'del', key: 'a' }, { type: 'del', key: k }],
    ] as Parameters<DB['batch']>[0][];
    for (const ops of batches) {
      expect(await rejectsWithoutThrowing(() => db.batch(ops))).toBe('INVALID_ARGUMENT');
      expect(await codeOf(() => db.batchSync(ops))).toBe('INVALID_ARGUMENT');
    }
    // (An undefined bound or range end means "none", as an omitted one.)
    if (bad !== undefined) {
      for (const bound of ['gt', 'gte', 'lt', 'lte']) {
        expect(await codeOf(() => db.iterator({ [bound]: k }))).toBe('INVALID_ARGUMENT');
      }
      expect(await rejectsWithoutThrowing(() => db.compactRange(k))).toBe('INVALID_ARGUMENT');
    }
    const it = db.iterator();
    expect(await codeOf(() => it.seek(k))).toBe('INVALID_ARGUMENT');
    it.close();
    expect(await dump(db)).toEqual(before);
    expect(lastSequence(db)).toBe(seq);
    await db.close();
  });

  it('malformed batches, write options, read options and iterator options', async () => {
    const { db } = await seeded();
    const before = await dump(db);
    const badBatches: unknown[] = [
      'not an array',
      null,
      [null],
      [{ type: 'upsert', key: 'c', value: '1' }],
      [{ type: 'put', key: 'c', value: '1' }, 7],
    ];
    for (const ops of badBatches) {
      expect(await rejectsWithoutThrowing(() => db.batch(ops as never)), JSON.stringify(ops)).toBe('INVALID_ARGUMENT');
      expect(await codeOf(() => db.batchSync(ops as never))).toBe('INVALID_ARGUMENT');
    }
    expect(await rejectsWithoutThrowing(() => db.put('c', '1', { sync: 'yes' } as never))).toBe('INVALID_ARGUMENT');
    expect(await rejectsWithoutThrowing(() => db.put('c', '1', 5 as never))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => db.delSync('a', { sync: 1 } as never))).toBe('INVALID_ARGUMENT');
    expect(await rejectsWithoutThrowing(() => db.get('a', { snapshot: { sequence: 1 } } as never))).toBe('INVALID_ARGUMENT');
    expect(await rejectsWithoutThrowing(() => db.get('a', 'x' as never))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => db.iterator({ gt: 1, gte: 'a' } as never))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => db.iterator({ limit: -2 }))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => db.iterator({ limit: 1.5 }))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => db.iterator({ reverse: 'yes' } as never))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => db.iterator({ snapshot: {} } as never))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => db.getProperty(5 as never))).toBe('INVALID_ARGUMENT');
    expect(await dump(db)).toEqual(before);
    await db.close();
  });

  it('strings are UTF-8, and Buffers and Uint8Arrays are the same bytes', async () => {
    const { db } = await seeded();
    await db.put('é', new Uint8Array([1, 2]));
    expect(db.getSync(Buffer.from('é', 'utf8'))).toEqual(Buffer.from([1, 2]));
    expect(await db.get(new Uint8Array(Buffer.from('é', 'utf8')))).toEqual(Buffer.from([1, 2]));
    // Buffers handed back are owned: changing them does not change the database.
    const v = db.getSync('a')!;
    v[0] = 0x7a;
    expect(db.getSync('a')?.toString()).toBe('1');
    // The caller's arrays are not kept: changing them after put does not change the database.
    const key = new Uint8Array([9]);
    const value = new Uint8Array([1]);
    await db.put(key, value);
    key[0] = 8;
    value[0] = 2;
    expect(db.getSync(new Uint8Array([9]))).toEqual(Buffer.from([1]));
    expect(db.getSync(new Uint8Array([8]))).toBeUndefined();
    await db.close();
  });
});

describe('after close', () => {
  it('every call is CLOSED; close is idempotent', async () => {
    const { db } = await seeded();
    const snap = db.snapshot();
    await db.close();
    await db.close();
    expect(db.closed).toBe(true);
    expect(await rejectsWithoutThrowing(() => db.get('a'))).toBe('CLOSED');
    expect(await rejectsWithoutThrowing(() => db.put('a', '1'))).toBe('CLOSED');
    expect(await rejectsWithoutThrowing(() => db.del('a'))).toBe('CLOSED');
    expect(await rejectsWithoutThrowing(() => db.batch([{ type: 'del', key: 'a' }]))).toBe('CLOSED');
    expect(await rejectsWithoutThrowing(() => db.compactRange())).toBe('CLOSED');
    expect(await codeOf(() => db.getSync('a'))).toBe('CLOSED');
    expect(await codeOf(() => db.putSync('a', '1'))).toBe('CLOSED');
    expect(await codeOf(() => db.delSync('a'))).toBe('CLOSED');
    expect(await codeOf(() => db.batchSync([]))).toBe('CLOSED');
    expect(await codeOf(() => db.iterator())).toBe('CLOSED');
    expect(await codeOf(() => db.snapshot())).toBe('CLOSED');
    expect(await codeOf(() => db.getProperty('sievekv.stats'))).toBe('CLOSED');
    expect(await codeOf(() => db.get('a', { snapshot: snap }))).toBe('CLOSED');
  });

  it('close waits for writes in flight, which are then durable and readable after reopen', async () => {
    const { db, fs } = await seeded();
    const writes = Array.from({ length: 10 }, (_, i) => db.put(`w${i}`, `${i}`, { sync: i % 2 === 0 }));
    const closing = db.close();
    await Promise.all(writes);
    await closing;
    const again = await DB.open('/db', { fs });
    for (let i = 0; i < 10; i++) expect(again.getSync(`w${i}`)?.toString()).toBe(`${i}`);
    await again.close();
  });
});

describe('the directory lock and existence checks', () => {
  const root = mkdtempSync(join(tmpdir(), 'sievekv-api-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  for (const kind of ['MemFileSystem', 'NodeFileSystem'] as const) {
    it(`${kind}: a second open of the same directory is LOCKED until the first closes`, async () => {
      const fs = kind === 'MemFileSystem' ? new MemFileSystem() : new NodeFileSystem();
      const dir = kind === 'MemFileSystem' ? '/db' : join(root, 'locked');
      const db = await DB.open(dir, { fs });
      await db.put('k', 'v');
      expect(await rejectsWithoutThrowing(() => DB.open(dir, { fs }))).toBe('LOCKED');
      expect(await codeOf(() => DB.openSync(dir, { fs }))).toBe('LOCKED');
      expect(db.getSync('k')?.toString()).toBe('v'); // the first is unaffected
      await db.close();
      const again = await DB.open(dir, { fs });
      expect(again.getSync('k')?.toString()).toBe('v');
      await again.close();
    });
  }

  it('createIfMissing: false on a missing or empty directory: INVALID_ARGUMENT, nothing created', async () => {
    const fs = new NodeFileSystem();
    const missing = join(root, 'missing');
    expect(await rejectsWithoutThrowing(() => DB.open(missing, { fs, createIfMissing: false }))).toBe('INVALID_ARGUMENT');
    expect(fs.exists(missing)).toBe(false);
    const empty = mkdtempSync(join(root, 'empty-'));
    expect(await rejectsWithoutThrowing(() => DB.open(empty, { fs, createIfMissing: false }))).toBe('INVALID_ARGUMENT');
    expect(readdirSync(empty).filter((n) => n !== 'LOCK' && !n.startsWith('LOCK.') && !n.startsWith('LOG'))).toEqual([]);
    // It did not keep the lock: a normal open works.
    const db = await DB.open(empty, { fs });
    await db.close();
    const reopened = await DB.open(empty, { fs, createIfMissing: false });
    await reopened.close();
  });

  it('errorIfExists: true on an existing database: INVALID_ARGUMENT, the database untouched and openable', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { fs });
    await db.put('k', 'v');
    await db.close();
    expect(await rejectsWithoutThrowing(() => DB.open('/db', { fs, errorIfExists: true }))).toBe('INVALID_ARGUMENT');
    // The wording Level's test suite looks for (abstract-level: /exists/, /does not exist/).
    await expect(DB.open('/db', { fs, errorIfExists: true })).rejects.toThrow(/already exists/);
    await expect(DB.open('/nothing', { fs, createIfMissing: false })).rejects.toThrow(/does not exist/);
    fs.mkdir('/empty');
    await expect(DB.open('/empty', { fs, createIfMissing: false })).rejects.toThrow(/does not exist/);
    const again = await DB.open('/db', { fs });
    expect(again.getSync('k')?.toString()).toBe('v');
    await again.close();
    const fresh = await DB.open('/fresh', { fs, errorIfExists: true });
    await fresh.close();
  });
});

describe('regions: the router a database was made with', () => {
  const byFirstByte = (name: string, n: number): RegionRouter => ({
    name,
    regions: Array.from({ length: n }, (_, i) => i),
    regionOf: (key) => (key.length === 0 ? 0 : key[0]! % n),
  });
  const listing = (fs: MemFileSystem): string[] => fs.list('/db').filter((n) => n !== 'LOG' && n !== 'LOG.old').sort();

  it('a plain database opened with a router: INVALID_ARGUMENT, nothing written, still opens plain', async () => {
    const { db, fs } = await seeded();
    await db.compactRange();
    await db.close();
    const before = listing(fs);
    expect(await rejectsWithoutThrowing(() => DB.open('/db', { fs, router: byFirstByte('test.mod3', 3) }))).toBe('INVALID_ARGUMENT');
    expect(listing(fs)).toEqual(before);
    const again = await DB.open('/db', { fs });
    expect(await dump(again)).toEqual(['61=31', '62=32']);
    await again.close();
  });

  it('a sharded database opened plain or with another router: INVALID_ARGUMENT; with its own: its data', async () => {
    const fs = new MemFileSystem();
    const router = byFirstByte('test.mod3', 3);
    const db = await DB.open('/db', { fs, router });
    for (const k of ['a', 'b', 'c', 'd']) await db.put(k, k.toUpperCase());
    await db.close();
    expect(await rejectsWithoutThrowing(() => DB.open('/db', { fs }))).toBe('INVALID_ARGUMENT');
    expect(await rejectsWithoutThrowing(() => DB.open('/db', { fs, router: byFirstByte('test.mod3', 4) }))).toBe('INVALID_ARGUMENT');
    expect(await rejectsWithoutThrowing(() => DB.open('/db', { fs, router: byFirstByte('test.other', 3) }))).toBe('INVALID_ARGUMENT');
    const again = await DB.open('/db', { fs, router });
    expect([...again.iterator()].map(([k, v]) => `${k}=${v}`)).toEqual(['a=A', 'b=B', 'c=C', 'd=D']);
    await again.close();
  });
});

describe('snapshots', () => {
  it('see the moment they were taken; once released, reading with them is CLOSED', async () => {
    const { db } = await seeded();
    const snap = db.snapshot();
    await db.put('a', 'changed');
    await db.del('b');
    await db.compactRange();
    expect((await db.get('a', { snapshot: snap }))?.toString()).toBe('1');
    expect(db.getSync('b', { snapshot: snap })?.toString()).toBe('2');
    expect([...db.iterator({ snapshot: snap })].map(([k, v]) => `${k}=${v}`)).toEqual(['a=1', 'b=2']);
    expect([...db.iterator()].map(([k, v]) => `${k}=${v}`)).toEqual(['a=changed']);
    snap.release();
    snap.release(); // idempotent
    expect(snap.released).toBe(true);
    expect(await rejectsWithoutThrowing(() => db.get('a', { snapshot: snap }))).toBe('CLOSED');
    expect(await codeOf(() => db.getSync('a', { snapshot: snap }))).toBe('CLOSED');
    expect(await codeOf(() => db.iterator({ snapshot: snap }))).toBe('CLOSED');
    await db.close();
  });
});

describe('getProperty', () => {
  it('num-files-at-level<N>, approximate-memory-usage, unknown names, leveldb. aliases', async () => {
    const { db } = await seeded({ writeBufferSize: 64 * 1024 });
    expect(db.getProperty('sievekv.num-files-at-level0')).toBe('0');
    const mem0 = Number(db.getProperty('sievekv.approximate-memory-usage'));
    for (let i = 0; i < 200; i++) await db.put(`key${i}`, 'x'.repeat(50));
    const mem1 = Number(db.getProperty('sievekv.approximate-memory-usage'));
    expect(mem1).toBeGreaterThan(mem0 + 200 * 50);
    await db.compactRange(); // flushes to level 0, then compacts level 0 into level 1
    expect(db.getProperty('sievekv.num-files-at-level0')).toBe('0');
    expect(db.getProperty('sievekv.num-files-at-level1')).toBe('1');
    expect(db.getProperty('leveldb.num-files-at-level1')).toBe('1');
    expect(Number(db.getProperty('sievekv.approximate-memory-usage'))).toBeLessThan(mem1);
    expect(db.getProperty('sievekv.num-files-at-level99')).toBeUndefined();
    expect(db.getProperty('sievekv.no-such-property')).toBeUndefined();
    const stats = JSON.parse(db.getProperty('sievekv.stats')!);
    expect(stats.flushes).toBe(1);
    expect(stats.levels).toEqual([
      { level: 1, files: 1, bytes: expect.any(Number), compactions: 1, bytesRead: expect.any(Number), bytesWritten: expect.any(Number), micros: expect.any(Number) },
    ]);
    expect(stats.writeAmplification).toBeGreaterThan(0);
    await db.close();
  });

  it('estimate-num-keys is within 5% for 10,000 keys spread over tables and the memtable, overwrites counted once', async () => {
    const db = await DB.open('/db', { fs: new MemFileSystem(), writeBufferSize: 64 * 1024 });
    const key = (i: number): string => `user${String(i).padStart(8, '0')}`;
    for (let i = 0; i < 10_000; i++) db.putSync(key(i), `v${i}`);
    for (let i = 0; i < 10_000; i += 3) db.putSync(key(i), `again${i}`); // overwrites, some in other tables
    for (let i = 0; i < 2_000; i++) db.putSync(key(i * 5), 'third'); // overwrites still in the memtable
    let files = 0;
    for (let level = 0; level < 7; level++) files += Number(db.getProperty(`sievekv.num-files-at-level${level}`));
    expect(files).toBeGreaterThan(1);
    const estimate = Number(db.getProperty('sievekv.estimate-num-keys'));
    expect(Math.abs(estimate - 10_000) / 10_000, `estimate ${estimate}`).toBeLessThan(0.05);
    await db.close();
  });

  it('stats counters move: gets, writes, and filter negatives for absent keys after a flush', async () => {
    const { db } = await seeded();
    for (let i = 0; i < 100; i++) await db.put(`present${i}`, `${i}`);
    await db.compactRange();
    const before = JSON.parse(db.getProperty('sievekv.stats')!);
    for (let i = 0; i < 100; i++) expect(await db.get(`present${i}x`)).toBeUndefined(); // inside the table's key range
    for (let i = 0; i < 10; i++) expect((await db.get(`present${i}`))?.toString()).toBe(`${i}`);
    const after = JSON.parse(db.getProperty('sievekv.stats')!);
    expect(after.gets - before.gets).toBe(110);
    expect(after.writes).toBe(before.writes);
    expect(after.filterNegatives - before.filterNegatives).toBeGreaterThan(80);
    expect(after.filesConsulted - before.filesConsulted).toBeGreaterThanOrEqual(100);
    expect(after.blocksRead + after.blockCacheHits).toBeGreaterThan(before.blocksRead + before.blockCacheHits);
    await db.put('one-more', 'x');
    expect(JSON.parse(db.getProperty('sievekv.stats')!).writes).toBe(after.writes + 1);
    await db.close();
  });
});

describe('synchronous twins', () => {
  it('openSync/putSync/delSync/batchSync/getSync do what the async methods do', async () => {
    const fsA = new MemFileSystem();
    const fsB = new MemFileSystem();
    const a = await DB.open('/db', { fs: fsA });
    const b = DB.openSync('/db', { fs: fsB });
    const steps: [string, (db: DB) => unknown, (db: DB) => unknown][] = [
      ['put', (db) => db.put('k1', 'v1'), (db) => db.putSync('k1', 'v1')],
      ['put synced', (db) => db.put('k2', 'v2', { sync: true }), (db) => db.putSync('k2', 'v2', { sync: true })],
      ['del', (db) => db.del('k1'), (db) => db.delSync('k1')],
      ['del absent', (db) => db.del('nope'), (db) => db.delSync('nope')],
      [
        'batch',
        (db) => db.batch([{ type: 'put', key: 'k3', value: 'v3' }, { type: 'del', key: 'k2' }, { type: 'put', key: 'k2', value: 'again' }]),
        (db) => db.batchSync([{ type: 'put', key: 'k3', value: 'v3' }, { type: 'del', key: 'k2' }, { type: 'put', key: 'k2', value: 'again' }]),
      ],
      ['empty batch', (db) => db.batch([]), (db) => db.batchSync([])],
    ];
    for (const [what, async, sync] of steps) {
      await async(a);
      sync(b);
      expect(await dump(b), what).toEqual(await dump(a));
      expect(lastSequence(b), what).toBe(lastSequence(a));
    }
    for (const k of ['k1', 'k2', 'k3', 'nope']) expect(b.getSync(k), k).toEqual(await a.get(k));
    await a.close();
    await b.close();
    const a2 = await DB.open('/db', { fs: fsA });
    const b2 = DB.openSync('/db', { fs: fsB });
    expect(await dump(b2)).toEqual(await dump(a2));
    await a2.close();
    await b2.close();
  });

  it('batches of every size in a row, committed at once or queued behind a synced group, each write exactly their own entries', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { fs, writeBufferSize: 64 * 1024 });
    const model = new Map<string, string>();
    const ops = (round: number, n: number): { type: 'put'; key: string; value: string }[] =>
      Array.from({ length: n }, (_, i) => ({ type: 'put' as const, key: `r${round}-${i}`, value: `${round}`.repeat((i % 7) * 40) }));
    const pending: Promise<void>[] = [];
    for (let round = 0; round < 40; round++) {
      const batch = ops(round, [1000, 3, 0, 250, 1][round % 5]!);
      for (const op of batch) model.set(op.key, op.value);
      if (round % 3 === 0) db.batchSync(batch);
      else pending.push(db.batch(batch, { sync: round % 4 === 1 }));
    }
    await Promise.all(pending);
    const seen = new Map<string, string>();
    for await (const [k, v] of db.iterator()) seen.set(k.toString(), v.toString());
    expect(seen).toEqual(new Map([...model].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
    await db.close();
    const again = await DB.open('/db', { fs });
    for (const [k, v] of model) expect(again.getSync(k)?.toString()).toBe(v);
    await again.close();
  });

  it('a synchronous write while a synced group waits for its fdatasync keeps the order of writes', async () => {
    const db = await DB.open('/db', { fs: new MemFileSystem() });
    const pending = [db.put('x', 'from-async-1', { sync: true }), db.put('x', 'from-async-2', { sync: true })];
    db.putSync('x', 'from-sync');
    expect(db.getSync('x')?.toString()).toBe('from-sync');
    await Promise.all(pending);
    // The async writes were issued first, so the synchronous one, issued last, must win.
    expect(db.getSync('x')?.toString()).toBe('from-sync');
    await db.close();
  });
});
