/**
 * The database a corruption campaign damages (scripts/corruption/campaign.ts): built once per
 * variant on a MemFileSystem, closed, and kept as plain bytes (`DatabaseImage`), so that every
 * case starts from an identical, independent copy.
 *
 * The build gives the database what damage should meet: several levels (tiny memtables, files
 * and level targets), overwrites and deletes of keys that live in older tables, a `compactRange`
 * of everything, then more writes that stay in level 0 and 1. A second session (a larger
 * memtable; its own MANIFEST) adds writes, a compaction of a sub-range and a flush, and last a
 * tail of 40 synced writes (puts, deletes and multi-key batches, a few of 40 KB) that lives only
 * in the WAL and spans several 32 KiB log blocks; the last close leaves the memtable image of that
 * WAL (db/memtable-image.ts), damaged too, and used by every case whose WAL is intact. Alongside, the logical contents: the state
 * after every write, so that a damaged WAL can be judged exactly against "the tables plus some
 * of the WAL's batches".
 *
 * Used by the campaign only: no vitest here (the script runs it under tsx).
 */
import { join } from 'node:path';
import { SeededRandom } from '../../bench/seeded-keys.js';
import { DB, type BatchOperation, type OpenOptions } from '../../src/db.js';
import { ValueType } from '../../src/format/internal-key.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { DezhouRegionRouter } from '../../src/shard/dezhou-router.js';
import { FileType, parseFileName } from '../../src/version/filenames.js';
import { MEMTABLE_IMAGE_FILE } from '../../src/db/memtable-image.js';
import { LogReader } from '../../src/wal/log-reader.js';
import { logBoundaries } from './damage.js';
import { batchSequence, forEachBatchEntry } from '../../src/wal/write-batch.js';

/** hex(key) → hex(value): the logical contents of a database. */
export type State = Map<string, string>;

/** `regions`: the sharded database's REGIONS file (router name and region count). */
export type FileRole = 'current' | 'manifest' | 'table' | 'wal' | 'regions' | 'memtable-image';

export interface ImageFile {
  /** Path on the file system (the database directory or a region's sub-directory). */
  path: string;
  role: FileRole;
  bytes: Uint8Array;
}

/** One record of a WAL: a write batch, as the database will replay it. */
export interface WalBatch {
  /** Index of the WAL file (into `DatabaseImage.wals`). */
  wal: number;
  /** File offsets of the record: its first fragment's header to its last fragment's end. */
  offset: number;
  end: number;
  sequence: number;
  /** hex(key) → hex(value), or null for a deletion; in batch order (the last one wins). */
  ops: [string, string | null][];
}

export interface DatabaseImage {
  name: string;
  dir: string;
  /** The options it was built with (the campaign adds `fs` and `paranoidChecks`). */
  options: OpenOptions;
  /** Directories to create (the database's, and the regions'). */
  dirs: string[];
  files: ImageFile[];
  /** What every read must show when nothing is damaged. */
  expected: State;
  /** The state the tables alone hold: `expected` before the WALs' batches. */
  base: State;
  /** Every WAL batch in replay order (WAL number, then file order). */
  walBatches: WalBatch[];
  /** WAL paths in replay order; the last one holding bytes is the newest. */
  wals: string[];
  /** Keys every case reads with `get`: all keys ever written, and some never written. */
  probes: string[];
  /** Files per level at close (for the report). */
  levels: number[];
}

export interface ImageVariant {
  name: string;
  options: Omit<OpenOptions, 'fs'>;
}

/** Tiny memtables, files and level targets: a few hundred writes fill several levels. */
const SMALL = { writeBufferSize: 4096, maxFileSize: 2048, maxBytesForLevelBase: 8192, levelMultiplier: 2, l0CompactionTrigger: 2 } as const;

export const VARIANTS: readonly ImageVariant[] = [
  { name: 'plain', options: { ...SMALL, blockSize: 256, compression: 'none' } },
  {
    name: 'sharded',
    options: {
      ...SMALL,
      blockSize: 512,
      compression: 'lz4',
      filterScope: 'table',
      router: new DezhouRegionRouter(),
    },
  },
];

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function roleOf(name: string): FileRole | undefined {
  if (name === 'REGIONS') return 'regions';
  if (name === MEMTABLE_IMAGE_FILE) return 'memtable-image';
  const parsed = parseFileName(name);
  if (parsed === undefined) return undefined;
  switch (parsed.type) {
    case FileType.CURRENT:
      return 'current';
    case FileType.DESCRIPTOR:
      return 'manifest';
    case FileType.TABLE:
      return 'table';
    case FileType.LOG:
      return 'wal';
    default:
      return undefined;
  }
}

function applyOps(state: State, ops: readonly [string, string | null][]): void {
  for (const [k, v] of ops) {
    if (v === null) state.delete(k);
    else state.set(k, v);
  }
}

/** Decodes every record of the WAL at `path` in `fs` (which must be undamaged). */
function readWal(fs: MemFileSystem, path: string, wal: number): WalBatch[] {
  const file = fs.openReadable(path);
  const batches: WalBatch[] = [];
  try {
    const reader = new LogReader(file, {
      onCorruption: (c) => {
        throw new Error(`the built WAL ${path} is damaged at ${c.offset}: ${c.reason}`);
      },
    });
    for (let record = reader.readRecord(); record !== null; record = reader.readRecord()) {
      const ops: [string, string | null][] = [];
      forEachBatchEntry(record, (type, key, value) => ops.push([hex(key), type === ValueType.VALUE ? hex(value) : null]));
      batches.push({ wal, offset: reader.lastRecordOffset, end: -1, sequence: batchSequence(record), ops });
    }
  } finally {
    file.close();
  }
  // Each record ends where its FULL or LAST fragment does.
  const fragments = logBoundaries(fs.readFile(path));
  for (const b of batches) {
    let i = fragments.findIndex((f) => f.offset === b.offset);
    while (i >= 0 && i < fragments.length && fragments[i]!.type !== 1 && fragments[i]!.type !== 4) i++;
    if (i < 0 || i >= fragments.length) throw new Error(`${path}: no end for the record at ${b.offset}`);
    b.end = fragments[i]!.offset + fragments[i]!.length;
  }
  return batches;
}

/** Builds the variant's database and returns its image. Deterministic for a seed. */
export async function buildImage(variant: ImageVariant, seed: number): Promise<DatabaseImage> {
  const random = new SeededRandom(seed ^ 0x1a2b3c4d);
  const next = (): number => random.nextUint32() / 2 ** 32;
  const dir = '/db';
  const fs = new MemFileSystem();
  // The first session: tiny memtables, so data reaches several levels.
  let db = await DB.open(dir, { ...variant.options, fs });

  const keySpace = 400;
  const keyOf = (i: number): Buffer => Buffer.from(`key-${String(i).padStart(5, '0')}`);
  const valueOf = (len: number): Buffer => {
    const v = Buffer.alloc(len);
    random.fill(v);
    return v;
  };
  /** Every write, in order, with the sequence number of its first entry (entries count one each). */
  const writes: { sequence: number; ops: [string, string | null][] }[] = [];
  let sequence = 1;
  const written = new Set<string>();

  const write = async (ops: BatchOperation[], sync: boolean): Promise<void> => {
    const encoded: [string, string | null][] = ops.map((op) => [
      hex(Buffer.from(op.key as Uint8Array)),
      op.type === 'put' ? hex(Buffer.from(op.value as Uint8Array)) : null,
    ]);
    if (ops.length === 1) {
      const op = ops[0]!;
      if (op.type === 'put') await db.put(op.key, op.value, { sync });
      else await db.del(op.key, { sync });
    } else {
      await db.batch(ops, { sync });
    }
    writes.push({ sequence, ops: encoded });
    sequence += ops.length;
    for (const [k] of encoded) written.add(k);
  };

  /** A put, a delete, or a batch of 2–6 of them; values of `valueMax` bytes at most. */
  const randomWrite = async (deletes: number, sync: boolean, batchChance: number, valueMax = 128): Promise<void> => {
    const n = next() < batchChance ? 2 + Math.floor(next() * 5) : 1;
    const ops: BatchOperation[] = [];
    for (let j = 0; j < n; j++) {
      const key = keyOf(Math.floor(next() * keySpace));
      if (next() < deletes) ops.push({ type: 'del', key });
      else ops.push({ type: 'put', key, value: valueOf(8 + Math.floor(next() * (valueMax - 8))) });
    }
    await write(ops, sync);
  };

  // 1. Fill: every key once, in a random order, so the first tables cover the whole space.
  const order = Array.from({ length: keySpace }, (_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  for (const [n, i] of order.entries()) {
    await write([{ type: 'put', key: keyOf(i), value: valueOf(16 + Math.floor(next() * 100)) }], false);
    if (n % 8 === 7) await turn();
  }
  // 2. Overwrites and deletes of keys that now live in tables.
  for (let n = 0; n < 250; n++) {
    await randomWrite(0.3, false, 0.15);
    if (n % 8 === 7) await turn();
  }
  // 3. Everything to the deepest level once.
  await db.compactRange();
  // 4. More writes: level 0 and 1 again, over the compacted data.
  for (let n = 0; n < 220; n++) {
    await randomWrite(0.25, false, 0.2);
    if (n % 8 === 7) await turn();
  }
  await db.close();

  // The second session, with the campaign's options: a memtable large enough that the WAL tail
  // spans several 32 KiB log blocks (records split FIRST/MIDDLE/LAST). Its MANIFEST (a new one:
  // every open starts one) gets a flush and a compaction edit before the tail.
  const options: OpenOptions = { ...variant.options, writeBufferSize: 256 * 1024 };
  db = await DB.open(dir, { ...options, fs });
  for (let n = 0; n < 60; n++) await randomWrite(0.3, false, 0.2);
  await db.compactRange(keyOf(Math.floor(keySpace / 3)), keyOf(Math.floor(keySpace / 2)));
  for (let n = 0; n < 40; n++) await randomWrite(0.3, false, 0.2);
  // A flush only (a range past every key: nothing to compact), so the WAL starts afresh.
  await db.compactRange('zzzz', 'zzzz');
  for (let i = 0; i < 20; i++) await turn();
  // 5. The WAL tail: synced writes that are in no table, some large enough to span log blocks.
  for (let n = 0; n < 40; n++) await randomWrite(0.3, true, 0.3, n % 10 === 4 ? 40_000 : 200);

  const levels: number[] = [];
  for (let level = 0; level < 7; level++) levels.push(Number(db.getProperty(`sievekv.num-files-at-level${level}`)));
  await db.close();

  // The files, as plain bytes.
  const dirs = [dir];
  const files: ImageFile[] = [];
  const visit = (d: string): void => {
    for (const name of fs.list(d).sort()) {
      const path = join(d, name);
      const role = roleOf(name);
      if (role !== undefined) files.push({ path, role, bytes: fs.readFile(path) });
      else if (name.startsWith('region-')) {
        dirs.push(path);
        visit(path);
      }
    }
  };
  visit(dir);

  const expected: State = new Map();
  for (const w of writes) applyOps(expected, w.ops);

  const wals = files.filter((f) => f.role === 'wal').map((f) => f.path);
  wals.sort();
  const walBatches = wals.flatMap((path, i) => readWal(fs, path, i));
  const firstWalSequence = walBatches[0]?.sequence ?? sequence;
  const base: State = new Map();
  for (const w of writes) if (w.sequence < firstWalSequence) applyOps(base, w.ops);
  const check: State = new Map(base);
  for (const b of walBatches) applyOps(check, b.ops);
  if (!sameState(check, expected)) throw new Error(`${variant.name}: the tables plus the WAL do not make the expected state`);
  const tail = writes.filter((w) => w.sequence >= firstWalSequence);
  if (tail.length !== walBatches.length) throw new Error(`${variant.name}: ${walBatches.length} WAL records for ${tail.length} writes after the last flush`);

  const probes = [...written, ...['', '00', hex(Buffer.from('key-')), hex(Buffer.from('key-99999')), hex(Buffer.from('zzzz'))]];
  for (let i = 0; i < 20; i++) probes.push(hex(Buffer.from(`key-${String(Math.floor(next() * keySpace)).padStart(5, '0')}x`)));

  return { name: variant.name, dir, options, dirs, files, expected, base, walBatches, wals, probes, levels };
}

export function sameState(a: State, b: State): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

/** A fresh MemFileSystem holding the image's files, every byte and name durable. */
export function materialize(image: DatabaseImage): MemFileSystem {
  const fs = new MemFileSystem();
  for (const d of image.dirs) fs.mkdir(d);
  for (const f of image.files) writeFile(fs, f.path, f.bytes);
  for (const d of image.dirs) fs.syncDir(d);
  return fs;
}

export function writeFile(fs: MemFileSystem, path: string, bytes: Uint8Array): void {
  const file = fs.createWritable(path);
  file.append(bytes);
  file.sync();
  file.close();
}

/** `base` plus the WAL batches for which `applied(i)` holds, in order. */
export function stateWith(image: DatabaseImage, applied: (i: number) => boolean): State {
  const state: State = new Map(image.base);
  image.walBatches.forEach((b, i) => {
    if (applied(i)) applyOps(state, b.ops);
  });
  return state;
}
