/**
 * bench/db's workloads: LevelDB's db_bench names and semantics (benchmarks/db_bench.cc), their
 * key and value data, and one timed loop per workload and calling style.
 *
 * Data, as db_bench makes it: keys are `%016d` of a number in [0, N) (16 ASCII bytes); values are
 * 100 bytes taken in turn from a 1 MiB pool of 100-byte pieces, each 50 random printable bytes
 * written twice (so a value compresses to about half, db_bench's compression ratio 0.5).
 * Random key numbers come from a seeded generator (bench/seeded-keys.ts), the same sequence for
 * every engine.
 *
 * Where this differs from db_bench (so that every read has a known right answer):
 * - fillrandom writes each of the N keys once, in a seeded random order (db_bench draws N keys
 *   with repeats, filling about 63% of them); overwrite then draws N keys with repeats, as
 *   db_bench does. So the read workloads run on a database holding exactly keys 0 … N−1:
 *   readrandom and seekrandom must find every key, readseq and readreverse must see N entries.
 * - fillsync writes N/100 entries (db_bench's comment says N/100; its code divides by 1000).
 * - The random reads, seeks and deletes do R operations (`--reads`), which may be fewer than N.
 * Kept as in db_bench: readmissing looks up the first 15 bytes of a present key (absent, but
 * inside the key range); seekrandom makes a new iterator per operation, seeks and reads one
 * entry ("found" when it is the key sought); fillbatch, fillrandombatch and overwritebatch write
 * 1000 entries per batch (db_bench's --batch_size).
 */
import { SeededRandom } from '../seeded-keys.js';
import type { AsyncStore, SyncStore } from './store.js';

export const KEY_BYTES = 16;
export const VALUE_BYTES = 100;
export const BATCH_ENTRIES = 1000;
const VALUE_POOL_BYTES = 1 << 20;

export interface Sizes {
  /** Entries in a filled database (db_bench --num). */
  readonly n: number;
  /** Operations of the random reads, seeks and deletes (db_bench --reads). */
  readonly reads: number;
}

export type WorkloadName =
  | 'fillseq'
  | 'fillbatch'
  | 'fillrandombatch'
  | 'fillsync'
  | 'fillrandom'
  | 'readmissingearly'
  | 'overwrite'
  | 'overwritebatch'
  | 'readrandom'
  | 'readmissing'
  | 'readseq'
  | 'readreverse'
  | 'seekrandom'
  | 'deleterandom';

export interface Workload {
  readonly name: WorkloadName;
  readonly kind: 'write' | 'read';
  /**
   * The database it runs on: `fresh` a new empty one (removed afterwards), `fill` a new empty one
   * that the following workloads use (fillrandom), `filled` the one `fill` made.
   */
  readonly db: 'fresh' | 'fill' | 'filled';
  /** Writes made durable one by one (fillsync). */
  readonly synced: boolean;
  /**
   * For a read: false if it begins as soon as the database is open, meeting whatever compaction
   * the writes before it left, instead of after level 0 has settled below the compaction trigger.
   * @defaultValue true
   */
  readonly settle?: boolean;
  /** Operations it performs. */
  ops(s: Sizes): number;
  /** How many lookups must find their key, for the workloads that have a right answer. */
  expectedFound?(s: Sizes): number;
  /** What a run of it does, for the header. */
  readonly description: string;
}

/** In run order: the fills on fresh databases, then everything on the one fillrandom made. */
export const WORKLOADS: readonly Workload[] = [
  { name: 'fillseq', kind: 'write', db: 'fresh', synced: false, ops: (s) => s.n, description: 'N puts, keys in ascending order, fresh database' },
  { name: 'fillbatch', kind: 'write', db: 'fresh', synced: false, ops: (s) => s.n, description: `N puts in ascending order, ${BATCH_ENTRIES} per batch, fresh database` },
  { name: 'fillrandombatch', kind: 'write', db: 'fresh', synced: false, ops: (s) => s.n, description: `N puts, every key once in random order, ${BATCH_ENTRIES} per batch (db_bench --batch_size), fresh database` },
  { name: 'fillsync', kind: 'write', db: 'fresh', synced: true, ops: (s) => Math.max(1, Math.floor(s.n / 100)), description: 'N/100 synced puts, random keys, fresh database' },
  { name: 'fillrandom', kind: 'write', db: 'fill', synced: false, ops: (s) => s.n, description: 'N puts, every key once in random order, fresh database (kept for what follows)' },
  {
    name: 'readmissingearly',
    kind: 'read',
    db: 'filled',
    synced: false,
    settle: false,
    ops: (s) => s.reads,
    expectedFound: () => 0,
    description: 'readmissing on a copy of the database fillrandom left, as soon as it opens (level 0 not yet compacted away)',
  },
  { name: 'overwrite', kind: 'write', db: 'filled', synced: false, ops: (s) => s.n, description: 'N puts of random keys (with repeats) over that database' },
  { name: 'overwritebatch', kind: 'write', db: 'filled', synced: false, ops: (s) => s.n, description: `N puts of random keys (with repeats), ${BATCH_ENTRIES} per batch, over that database` },
  { name: 'readrandom', kind: 'read', db: 'filled', synced: false, ops: (s) => s.reads, expectedFound: (s) => s.reads, description: 'R gets of random present keys' },
  { name: 'readmissing', kind: 'read', db: 'filled', synced: false, ops: (s) => s.reads, expectedFound: () => 0, description: 'R gets of absent keys (a present key minus its last byte)' },
  { name: 'readseq', kind: 'read', db: 'filled', synced: false, ops: (s) => s.n, expectedFound: (s) => s.n, description: 'one iterator over all N entries, ascending' },
  { name: 'readreverse', kind: 'read', db: 'filled', synced: false, ops: (s) => s.n, expectedFound: (s) => s.n, description: 'one iterator over all N entries, descending' },
  { name: 'seekrandom', kind: 'read', db: 'filled', synced: false, ops: (s) => s.reads, expectedFound: (s) => s.reads, description: 'R × (new iterator, seek a random key, read one entry, close)' },
  { name: 'deleterandom', kind: 'write', db: 'filled', synced: false, ops: (s) => s.reads, description: 'R deletes of random keys (with repeats)' },
];

/**
 * The workloads in the order their key seeds were given: a workload added later takes the next
 * seed, so it changes no other workload's keys (readmissingearly came in session 16, run after
 * fillrandom).
 */
const SEED_ORDER: readonly WorkloadName[] = [
  'fillseq',
  'fillbatch',
  'fillrandombatch',
  'fillsync',
  'fillrandom',
  'overwrite',
  'overwritebatch',
  'readrandom',
  'readmissing',
  'readseq',
  'readreverse',
  'seekrandom',
  'deleterandom',
  'readmissingearly',
];

/** The index of `w`'s key seed (see SEED_ORDER). */
export function seedIndex(w: Workload): number {
  return SEED_ORDER.indexOf(w.name);
}

/** What one timed run measured. */
export interface Outcome {
  readonly ops: number;
  readonly seconds: number;
  /** Lookups that found their key, entries a scan saw, or for writes the sample read back. */
  readonly found: number;
  /** For writes: how many of the written keys were read back after the timing (all must be found). */
  readonly checked: number;
  readonly bytes: number;
  /** An LSM's files per level when the workload began (after open). */
  readonly shape?: string;
}

/** The key `%016d` of `n` (or its first `length` bytes) as a new Buffer, as a program makes keys. */
export function makeKey(n: number, length = KEY_BYTES): Buffer {
  const key = Buffer.allocUnsafe(length);
  let x = n;
  for (let i = KEY_BYTES - 1; i >= 0; i--) {
    const digit = x % 10;
    x = (x - digit) / 10;
    if (i < length) key[i] = 48 + digit;
  }
  return key;
}

/** db_bench's RandomGenerator: a pool of compressible pieces, one per value, in turn. */
export function makeValues(seed: number): readonly Buffer[] {
  const random = new SeededRandom(seed);
  const count = Math.floor(VALUE_POOL_BYTES / VALUE_BYTES);
  const pool = Buffer.allocUnsafe(count * VALUE_BYTES);
  const half = VALUE_BYTES / 2;
  const values = new Array<Buffer>(count);
  for (let p = 0; p < count; p++) {
    const at = p * VALUE_BYTES;
    for (let j = 0; j < half; j++) pool[at + j] = 32 + (random.nextUint32() % 95);
    pool.copyWithin(at + half, at, at + half);
    values[p] = pool.subarray(at, at + VALUE_BYTES);
  }
  return values;
}

function uniform(random: SeededRandom, n: number): number {
  return Math.floor((random.nextUint32() / 4294967296) * n);
}

/** The key numbers a workload touches, in order (made before the timing). */
export function keyNumbers(w: Workload, s: Sizes, seed: number): Uint32Array {
  const count = w.ops(s);
  const random = new SeededRandom(seed);
  const out = new Uint32Array(w.name === 'readseq' || w.name === 'readreverse' ? 0 : count);
  if (w.name === 'fillseq' || w.name === 'fillbatch') {
    for (let i = 0; i < count; i++) out[i] = i;
  } else if (w.name === 'fillrandom' || w.name === 'fillrandombatch') {
    for (let i = 0; i < count; i++) out[i] = i;
    for (let i = count - 1; i > 0; i--) {
      const j = uniform(random, i + 1);
      const t = out[i]!;
      out[i] = out[j]!;
      out[j] = t;
    }
  } else {
    for (let i = 0; i < out.length; i++) out[i] = uniform(random, s.n);
  }
  return out;
}

// One loop per workload and style, each doing only its own calls (no callbacks in the timed loop).

/** Runs `w` on an async store; returns the timed seconds and what it found. */
export async function runAsync(w: Workload, store: AsyncStore, keys: Uint32Array, values: readonly Buffer[]): Promise<Outcome> {
  const vn = values.length;
  let found = 0;
  let bytes = 0;
  let ops = keys.length;
  const t0 = performance.now();
  switch (w.name) {
    case 'fillbatch':
    case 'fillrandombatch':
    case 'overwritebatch':
      for (let i = 0; i < keys.length; i += BATCH_ENTRIES) {
        const end = Math.min(keys.length, i + BATCH_ENTRIES);
        const ks = new Array<Buffer>(end - i);
        const vs = new Array<Buffer>(end - i);
        for (let j = i; j < end; j++) {
          ks[j - i] = makeKey(keys[j]!);
          vs[j - i] = values[j % vn]!;
        }
        await store.batch(ks, vs);
      }
      break;
    case 'fillseq':
    case 'fillsync':
    case 'fillrandom':
    case 'overwrite':
      for (let i = 0; i < keys.length; i++) await store.put(makeKey(keys[i]!), values[i % vn]!);
      break;
    case 'deleterandom':
      for (let i = 0; i < keys.length; i++) await store.del(makeKey(keys[i]!));
      break;
    case 'readrandom':
      for (let i = 0; i < keys.length; i++) {
        const v = await store.get(makeKey(keys[i]!));
        if (v !== undefined) {
          found++;
          bytes += v.length;
        }
      }
      break;
    case 'readmissing':
    case 'readmissingearly':
      for (let i = 0; i < keys.length; i++) {
        if ((await store.get(makeKey(keys[i]!, KEY_BYTES - 1))) !== undefined) found++;
      }
      break;
    case 'seekrandom':
      for (let i = 0; i < keys.length; i++) {
        const key = makeKey(keys[i]!);
        const at = await store.seek(key);
        if (at !== undefined && at.equals(key)) found++;
      }
      break;
    case 'readseq':
    case 'readreverse': {
      const count = await store.scan(w.name === 'readreverse');
      found = ops = count.entries;
      bytes = count.bytes;
      break;
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  let checked = 0;
  if (w.kind === 'write' && w.name !== 'deleterandom') {
    for (const k of checkSample(keys)) {
      checked++;
      if ((await store.get(makeKey(k))) !== undefined) found++;
    }
  }
  return { ops, seconds, found, checked, bytes };
}

/** As runAsync, for a sync store; undefined if the store lacks the synchronous call `w` needs. */
export function runSync(w: Workload, store: SyncStore, keys: Uint32Array, values: readonly Buffer[]): Outcome | undefined {
  const vn = values.length;
  let found = 0;
  let bytes = 0;
  let ops = keys.length;
  const t0 = performance.now();
  switch (w.name) {
    case 'fillbatch':
    case 'fillrandombatch':
    case 'overwritebatch': {
      const batch = store.batch;
      if (batch === undefined) return undefined;
      for (let i = 0; i < keys.length; i += BATCH_ENTRIES) {
        const end = Math.min(keys.length, i + BATCH_ENTRIES);
        const ks = new Array<Buffer>(end - i);
        const vs = new Array<Buffer>(end - i);
        for (let j = i; j < end; j++) {
          ks[j - i] = makeKey(keys[j]!);
          vs[j - i] = values[j % vn]!;
        }
        batch(ks, vs);
      }
      break;
    }
    case 'fillseq':
    case 'fillsync':
    case 'fillrandom':
    case 'overwrite': {
      const put = store.put;
      if (put === undefined) return undefined;
      for (let i = 0; i < keys.length; i++) put(makeKey(keys[i]!), values[i % vn]!);
      break;
    }
    case 'deleterandom': {
      const del = store.del;
      if (del === undefined) return undefined;
      for (let i = 0; i < keys.length; i++) del(makeKey(keys[i]!));
      break;
    }
    case 'readrandom':
      for (let i = 0; i < keys.length; i++) {
        const v = store.get(makeKey(keys[i]!));
        if (v !== undefined) {
          found++;
          bytes += v.length;
        }
      }
      break;
    case 'readmissing':
    case 'readmissingearly':
      for (let i = 0; i < keys.length; i++) {
        if (store.get(makeKey(keys[i]!, KEY_BYTES - 1)) !== undefined) found++;
      }
      break;
    case 'seekrandom': {
      const seek = store.seek;
      if (seek === undefined) return undefined;
      for (let i = 0; i < keys.length; i++) {
        const key = makeKey(keys[i]!);
        const at = seek(key);
        if (at !== undefined && at.equals(key)) found++;
      }
      break;
    }
    case 'readseq':
    case 'readreverse': {
      const scan = store.scan;
      if (scan === undefined) return undefined;
      const count = scan(w.name === 'readreverse');
      found = ops = count.entries;
      bytes = count.bytes;
      break;
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  let checked = 0;
  if (w.kind === 'write' && w.name !== 'deleterandom') {
    for (const k of checkSample(keys)) {
      checked++;
      if (store.get(makeKey(k)) !== undefined) found++;
    }
  }
  return { ops, seconds, found, checked, bytes };
}

/** Up to 1000 of the written key numbers, evenly spread: read back (untimed) after a fill. */
function checkSample(keys: Uint32Array): number[] {
  const step = Math.max(1, Math.floor(keys.length / 1000));
  const out: number[] = [];
  for (let i = keys.length - 1; i >= 0; i -= step) out.push(keys[i]!);
  return out;
}
