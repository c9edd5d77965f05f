/**
 * The database model: a command language (put, del, batch, concurrent writes, get, iterate,
 * snapshot, release, flush, reopen), a sorted in-memory model that decides what every read must
 * return, and a runner that applies a command list to a real `DB` and the model side by side,
 * checking after every step. Used by db-model.test.ts (random command lists from fast-check) and
 * by test/regressions (shrunk failures, written out by hand).
 *
 * Keys come from a small alphabet (with the empty key and 0x00/0xff bytes), so overwrites,
 * deletes of live keys and keys that are prefixes of others are common. Order is bytewise
 * (`Buffer.compare`), the database's.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { DB, type BatchOperation, type OpenOptions } from '../../src/db.js';
import type { Snapshot } from '../../src/db/snapshot.js';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import { RibbonFilterPolicy } from '../../src/filter/ribbon.js';

export type Bytes = Uint8Array;

export type Write =
  | { t: 'put'; key: Bytes; value: Bytes }
  | { t: 'del'; key: Bytes }
  | { t: 'batch'; ops: ({ t: 'put'; key: Bytes; value: Bytes } | { t: 'del'; key: Bytes })[] };

export interface IterSpec {
  gt?: Bytes;
  gte?: Bytes;
  lt?: Bytes;
  lte?: Bytes;
  reverse: boolean;
  limit?: number;
  /** Index (mod the held count) of the snapshot to read at; null: the live state. */
  snap: number | null;
  /** Seek before the first next. */
  seek: Bytes | null;
  /** Entries to read before `meanwhile` runs (the rest are read after). */
  readFirst: number;
  /** After `meanwhile`: seek again, then read the rest (the limit counts every entry yielded). */
  reseek: Bytes | null;
  /** A write (and maybe a flush) made while the iterator is open: it must not see them. */
  meanwhile: Write | null;
  flushMeanwhile: boolean;
}

export type Command =
  /** `twin`: through the synchronous method (`putSync`, …). */
  | { t: 'write'; w: Write; sync: boolean; twin: boolean }
  /**
   * Issued together without awaiting between them (group commit), applied in issue order; a
   * `twin` write goes through the synchronous method at its turn, among the pending async ones.
   */
  | { t: 'concurrent'; writes: { w: Write; sync: boolean; twin?: boolean }[] }
  | { t: 'get'; key: Bytes; snap: number | null; twin: boolean }
  | { t: 'iter'; spec: IterSpec }
  | { t: 'snapshot' }
  | { t: 'release'; snap: number }
  | { t: 'flush' }
  | { t: 'reopen' };

// -------------------------------------------------------------------------------------------
// The model

const hex = (b: Bytes): string => Buffer.from(b).toString('hex');

/** The state the database must show: hex(key) → [key, value]. */
export type State = Map<string, [Bytes, Bytes]>;

export function applyWrite(state: State, w: Write): void {
  const ops = w.t === 'batch' ? w.ops : [w];
  for (const op of ops) {
    if (op.t === 'put') state.set(hex(op.key), [op.key, op.value]);
    else state.delete(hex(op.key));
  }
}

export function touchedKeys(w: Write): Bytes[] {
  return w.t === 'batch' ? w.ops.map((op) => op.key) : [w.key];
}

export function sortedEntries(state: State): [Bytes, Bytes][] {
  return [...state.values()].sort((a, b) => Buffer.compare(a[0], b[0]));
}

/** What `db.iterator(spec)` must yield over `state`. */
export function expectedScan(state: State, spec: IterSpec): [Bytes, Bytes][] {
  const inRange = (k: Bytes): boolean =>
    (spec.gt === undefined || Buffer.compare(k, spec.gt) > 0) &&
    (spec.gte === undefined || Buffer.compare(k, spec.gte) >= 0) &&
    (spec.lt === undefined || Buffer.compare(k, spec.lt) < 0) &&
    (spec.lte === undefined || Buffer.compare(k, spec.lte) <= 0);
  let rows = sortedEntries(state).filter(([k]) => inRange(k));
  if (spec.reverse) rows.reverse();
  if (spec.seek !== null) {
    const target = spec.seek;
    rows = rows.filter(([k]) => (spec.reverse ? Buffer.compare(k, target) <= 0 : Buffer.compare(k, target) >= 0));
  }
  return spec.limit === undefined ? rows : rows.slice(0, spec.limit);
}

// -------------------------------------------------------------------------------------------
// Running commands

const toOps = (w: Write): BatchOperation[] =>
  (w.t === 'batch' ? w.ops : [w]).map((op) => (op.t === 'put' ? { type: 'put', key: op.key, value: op.value } : { type: 'del', key: op.key }));

function writeAsync(db: DB, w: Write, sync: boolean): Promise<void> {
  const o = { sync };
  if (w.t === 'put') return db.put(w.key, w.value, o);
  if (w.t === 'del') return db.del(w.key, o);
  return db.batch(toOps(w), o);
}

function writeSync(db: DB, w: Write, sync: boolean): void {
  const o = { sync };
  if (w.t === 'put') db.putSync(w.key, w.value, o);
  else if (w.t === 'del') db.delSync(w.key, o);
  else db.batchSync(toOps(w), o);
}

function show(b: Bytes | undefined): string {
  return b === undefined ? 'undefined' : `<${hex(b)}>`;
}

function expectValue(actual: Buffer | undefined, expected: Bytes | undefined, what: string): void {
  if (actual === undefined || expected === undefined) {
    expect(show(actual), what).toBe(show(expected));
    return;
  }
  expect(Buffer.from(expected).equals(actual), `${what}: ${show(actual)} !== ${show(expected)}`).toBe(true);
}

function expectRows(actual: [Bytes, Bytes][], expected: [Bytes, Bytes][], what: string): void {
  const fmt = (rows: [Bytes, Bytes][]): string[] => rows.map(([k, v]) => `${hex(k)}=${hex(v)}`);
  expect(fmt(actual), what).toEqual(fmt(expected));
}

interface Held {
  snap: Snapshot;
  state: State;
}

/** A database under test and its model. */
export class ModelRun {
  db!: DB;
  state: State = new Map();
  held: Held[] = [];
  step = 0;

  constructor(
    readonly dir: string,
    readonly options: OpenOptions,
  ) {}

  async open(): Promise<void> {
    this.db = await DB.open(this.dir, this.options);
  }

  async close(): Promise<void> {
    for (const h of this.held) h.snap.release();
    this.held = [];
    await this.db.close();
  }

  #heldAt(index: number | null): Held | undefined {
    if (index === null || this.held.length === 0) return undefined;
    return this.held[index % this.held.length];
  }

  async checkKeys(keys: Bytes[], what: string): Promise<void> {
    for (const key of keys) {
      expectValue(await this.db.get(key), this.state.get(hex(key))?.[1], `${what}: get ${show(key)}`);
    }
  }

  async checkAll(what: string): Promise<void> {
    const rows: [Bytes, Bytes][] = [];
    for await (const entry of this.db.iterator()) rows.push(entry);
    expectRows(rows, sortedEntries(this.state), `${what}: full scan`);
    const back: [Bytes, Bytes][] = [];
    for (const entry of this.db.iterator({ reverse: true })) back.push(entry);
    expectRows(back, sortedEntries(this.state).reverse(), `${what}: full reverse scan`);
    for (const [k, v] of this.state.values()) expectValue(this.db.getSync(k), v, `${what}: getSync ${show(k)}`);
  }

  async run(cmd: Command): Promise<void> {
    const what = `step ${this.step++} ${cmd.t}`;
    switch (cmd.t) {
      case 'write': {
        if (cmd.twin) writeSync(this.db, cmd.w, cmd.sync);
        else await writeAsync(this.db, cmd.w, cmd.sync);
        applyWrite(this.state, cmd.w);
        await this.checkKeys(touchedKeys(cmd.w), what);
        break;
      }
      case 'concurrent': {
        const pending = cmd.writes.map(({ w, sync, twin }) => {
          if (!twin) return writeAsync(this.db, w, sync);
          writeSync(this.db, w, sync);
          return Promise.resolve();
        });
        await Promise.all(pending);
        for (const { w } of cmd.writes) applyWrite(this.state, w);
        await this.checkKeys(cmd.writes.flatMap(({ w }) => touchedKeys(w)), what);
        break;
      }
      case 'get': {
        const h = this.#heldAt(cmd.snap);
        const state = h?.state ?? this.state;
        const options = h === undefined ? undefined : { snapshot: h.snap };
        const actual = cmd.twin ? this.db.getSync(cmd.key, options) : await this.db.get(cmd.key, options);
        expectValue(actual, state.get(hex(cmd.key))?.[1], `${what} ${show(cmd.key)}${h ? ' at a snapshot' : ''}`);
        break;
      }
      case 'iter':
        await this.#iterate(cmd.spec, what);
        break;
      case 'snapshot':
        this.held.push({ snap: this.db.snapshot(), state: new Map(this.state) });
        break;
      case 'release': {
        if (this.held.length === 0) break;
        const [h] = this.held.splice(cmd.snap % this.held.length, 1);
        h!.snap.release();
        break;
      }
      case 'flush':
        await this.db.compactRange();
        await this.checkAll(what);
        break;
      case 'reopen':
        await this.close();
        await this.open();
        await this.checkAll(what);
        break;
    }
  }

  async #iterate(spec: IterSpec, what: string): Promise<void> {
    const h = this.#heldAt(spec.snap);
    const state = new Map(h?.state ?? this.state); // what the iterator sees, whatever happens meanwhile
    let expected = expectedScan(state, spec);
    const it = this.db.iterator({
      ...(spec.gt !== undefined ? { gt: spec.gt } : {}),
      ...(spec.gte !== undefined ? { gte: spec.gte } : {}),
      ...(spec.lt !== undefined ? { lt: spec.lt } : {}),
      ...(spec.lte !== undefined ? { lte: spec.lte } : {}),
      reverse: spec.reverse,
      ...(spec.limit !== undefined ? { limit: spec.limit } : {}),
      ...(h !== undefined ? { snapshot: h.snap } : {}),
    });
    if (spec.seek !== null) it.seek(spec.seek);
    const rows: [Bytes, Bytes][] = [];
    let done = false;
    for (let i = 0; i < spec.readFirst && !done; i++) {
      const r = await it.next();
      if (r.done) done = true;
      else rows.push(r.value);
    }
    if (spec.meanwhile !== null) {
      // The open iterator reads at its creation's sequence: later writes and flushes are invisible.
      await writeAsync(this.db, spec.meanwhile, false);
      applyWrite(this.state, spec.meanwhile);
      if (spec.flushMeanwhile) await this.db.compactRange();
    }
    if (spec.reseek !== null) {
      // Also after the end or the limit (`done`): an iterator stepped by hand stays open until
      // closed, and a seek places it again; the limit still counts every entry yielded.
      expect(it.closed, `${what}: open after next() reported done`).toBe(false);
      it.seek(spec.reseek);
      const left = spec.limit === undefined ? undefined : spec.limit - rows.length;
      const rest = expectedScan(state, { ...spec, seek: spec.reseek, limit: undefined });
      expected = [...expected.slice(0, rows.length), ...(left === undefined ? rest : rest.slice(0, Math.max(0, left)))];
    }
    for await (const entry of it) rows.push(entry);
    expectRows(rows, expected, `${what} ${JSON.stringify(describeSpec(spec))}`);
    expect(it.closed, `${what}: iterator closed once exhausted`).toBe(true);
    if (spec.meanwhile !== null) await this.checkKeys(touchedKeys(spec.meanwhile), `${what} (write during iteration)`);
  }
}

function describeSpec(spec: IterSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(spec)) out[k] = v instanceof Uint8Array ? hex(v) : v;
  return out;
}

/** Runs `commands` on a fresh database in `dir`, checking every step; closes it at the end. */
export async function runModel(dir: string, options: OpenOptions, commands: readonly Command[]): Promise<void> {
  const run = new ModelRun(dir, options);
  await run.open();
  try {
    for (const cmd of commands) await run.run(cmd);
    await run.checkAll('end');
  } finally {
    await run.close();
  }
}

// -------------------------------------------------------------------------------------------
// Arbitraries

const b = (s: string): Bytes => Buffer.from(s, 'latin1');

/** Few keys, so that writes collide; prefixes of each other, the empty key, 0x00 and 0xff bytes. */
export const KEYS: readonly Bytes[] = [
  b(''), b('a'), b('a\x00'), b('ab'), b('abc'), b('b'), b('ba'), b('c'), b('cc'),
  b('\x00'), b('\x00\x00'), b('\xff'), b('\xff\xff'), b('k\x80'), b('key-0001'), b('key-0002'),
];

const keyArb: fc.Arbitrary<Bytes> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...KEYS) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 3 }).map((k) => k.map((x) => [0, 1, 0x61, 0x62, 0xfe, 0xff][x % 6]!)) },
);

/** Bounds also fall between and around the keys. */
const boundArb: fc.Arbitrary<Bytes> = fc.oneof(keyArb, fc.constantFrom(b('aa'), b('b\x00'), b('\x01'), b('z'), b('\xff\xff\xff')));

/** Empty values, small ones, and some large enough to fill a small memtable in a few writes. */
const valueArb: fc.Arbitrary<Bytes> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(new Uint8Array(0)) },
  { weight: 6, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 12 }) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 700 }).chain((n) => fc.uint8Array({ minLength: n, maxLength: n })) },
);

const opArb = fc.oneof(
  { weight: 3, arbitrary: fc.record({ t: fc.constant('put' as const), key: keyArb, value: valueArb }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('del' as const), key: keyArb }) },
);

export const writeArb: fc.Arbitrary<Write> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ t: fc.constant('put' as const), key: keyArb, value: valueArb }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('del' as const), key: keyArb }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('batch' as const), ops: fc.array(opArb, { minLength: 0, maxLength: 6 }) }) },
);

const snapRef = fc.option(fc.nat({ max: 7 }), { freq: 3, nil: null });

const iterSpecArb: fc.Arbitrary<IterSpec> = fc
  .record({
    lower: fc.option(fc.record({ key: boundArb, inclusive: fc.boolean() }), { nil: undefined }),
    upper: fc.option(fc.record({ key: boundArb, inclusive: fc.boolean() }), { nil: undefined }),
    reverse: fc.boolean(),
    limit: fc.option(fc.nat({ max: 6 }), { freq: 3, nil: undefined }),
    snap: snapRef,
    seek: fc.option(boundArb, { freq: 4, nil: null }),
    readFirst: fc.nat({ max: 4 }),
    reseek: fc.option(boundArb, { freq: 3, nil: null }),
    meanwhile: fc.option(writeArb, { freq: 3, nil: null }),
    flushMeanwhile: fc.boolean(),
  })
  .map(({ lower, upper, ...rest }) => ({
    ...(lower ? (lower.inclusive ? { gte: lower.key } : { gt: lower.key }) : {}),
    ...(upper ? (upper.inclusive ? { lte: upper.key } : { lt: upper.key }) : {}),
    ...rest,
  }));

export const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ t: fc.constant('write' as const), w: writeArb, sync: fc.boolean(), twin: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('concurrent' as const),
      writes: fc.array(fc.record({ w: writeArb, sync: fc.boolean(), twin: fc.boolean() }), { minLength: 2, maxLength: 6 }),
    }),
  },
  { weight: 6, arbitrary: fc.record({ t: fc.constant('get' as const), key: keyArb, snap: snapRef, twin: fc.boolean() }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('iter' as const), spec: iterSpecArb }) },
  { weight: 2, arbitrary: fc.constant({ t: 'snapshot' as const }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('release' as const), snap: fc.nat({ max: 7 }) }) },
  { weight: 1, arbitrary: fc.constant({ t: 'flush' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'reopen' as const }) },
);

/** Small memtables and blocks so that flushes, multi-block tables and WAL switches are common. */
export const optionsArb = fc.record({
  writeBufferSize: fc.constantFrom(1024, 2048, 4096),
  blockSize: fc.constantFrom(128, 256, 4096),
  blockRestartInterval: fc.constantFrom(1, 2, 16),
  compression: fc.constantFrom('none' as const, 'snappy' as const, 'lz4' as const),
  filterScope: fc.constantFrom('block' as const, 'table' as const),
  memtableBloomBitsPerKey: fc.constantFrom(0, 10),
  /** Filters never change answers: none, LevelDB's Bloom (also at 1 bit/key: many false positives), Ribbon. */
  filterPolicy: fc.constantFrom('bloom', 'bloom1', 'ribbon', 'none').map((name) =>
    name === 'bloom' ? new BloomFilterPolicy(10) : name === 'bloom1' ? new BloomFilterPolicy(1) : name === 'ribbon' ? new RibbonFilterPolicy() : null,
  ),
});
