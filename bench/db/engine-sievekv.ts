/**
 * sievekv as bench/db drives it: `DB.open(dir)` with default options, through the public API
 * (src/db.ts), in both calling styles — the async methods every user gets, and the synchronous
 * twins. src/ is imported when a database is opened, so a child process measuring another
 * engine does not carry sievekv's modules in its RSS.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BatchOperation, DB, OpenOptions } from '../../src/db.js';
import { REPO_DIR } from './peers.js';
import { levelShape, type AsyncStore, type Column, type Engine, type ScanCount, type StallFigures, type SyncStore } from './store.js';

interface StallCounters {
  stallMicrosMemtableFull: number;
  stallMicrosL0Slowdown: number;
  stallMicrosL0Stop: number;
  stallsMemtableFull: number;
  stallsL0Slowdown: number;
  stallsL0Stop: number;
}

const SYNCED = { sync: true } as const;

function asyncStore(db: DB, synced: boolean): AsyncStore {
  const writeOptions = synced ? SYNCED : undefined;
  return {
    style: 'async',
    put: (key, value) => db.put(key, value, writeOptions),
    batch: (keys, values) => db.batch(operations(keys, values), writeOptions),
    get: (key) => db.get(key),
    del: (key) => db.del(key, writeOptions),
    async scan(reverse) {
      const count: ScanCount = { entries: 0, bytes: 0 };
      for await (const [k, v] of db.iterator({ reverse })) {
        count.entries++;
        count.bytes += k.length + v.length;
      }
      return count;
    },
    async seek(key) {
      const it = db.iterator();
      try {
        it.seek(key);
        const r = await it.next();
        return r.done === true ? undefined : r.value[0];
      } finally {
        it.close();
      }
    },
    shape: () => shapeOf(db),
    level0Files: () => Number(db.getProperty('sievekv.num-files-at-level0') ?? 0),
    stalls: () => stallsOf(db),
    close: () => db.close(),
  };
}

function syncStore(db: DB, synced: boolean): SyncStore {
  const writeOptions = synced ? SYNCED : undefined;
  return {
    style: 'sync',
    put: (key, value) => db.putSync(key, value, writeOptions),
    batch: (keys, values) => db.batchSync(operations(keys, values), writeOptions),
    get: (key) => db.getSync(key),
    del: (key) => db.delSync(key, writeOptions),
    scan(reverse) {
      const count: ScanCount = { entries: 0, bytes: 0 };
      for (const [k, v] of db.iterator({ reverse })) {
        count.entries++;
        count.bytes += k.length + v.length;
      }
      return count;
    },
    seek(key) {
      const it = db.iterator();
      try {
        it.seek(key);
        return it.nextSync()?.[0];
      } finally {
        it.close();
      }
    },
    shape: () => shapeOf(db),
    level0Files: () => Number(db.getProperty('sievekv.num-files-at-level0') ?? 0),
    stalls: () => stallsOf(db),
    close: () => db.close(),
  };
}

/** The stall figures of `sievekv.stats` (µs and counts since open, by reason); throws if one is missing. */
function stallsOf(db: DB): StallFigures {
  const s = JSON.parse(db.getProperty('sievekv.stats') ?? '{}') as Partial<StallCounters>;
  const figure = (name: keyof StallCounters): number => {
    const x = s[name];
    if (typeof x !== 'number') throw new Error(`sievekv.stats has no ${name}`);
    return x;
  };
  return {
    memtableFull: { micros: figure('stallMicrosMemtableFull'), count: figure('stallsMemtableFull') },
    l0Slowdown: { micros: figure('stallMicrosL0Slowdown'), count: figure('stallsL0Slowdown') },
    l0Stop: { micros: figure('stallMicrosL0Stop'), count: figure('stallsL0Stop') },
  };
}

function shapeOf(db: DB): string {
  return levelShape((level) => Number(db.getProperty(`sievekv.num-files-at-level${level}`) ?? 0));
}

function operations(keys: readonly Buffer[], values: readonly Buffer[]): BatchOperation[] {
  const ops = new Array<BatchOperation>(keys.length);
  for (let i = 0; i < keys.length; i++) ops[i] = { type: 'put', key: keys[i]!, value: values[i]! };
  return ops;
}


export const sievekvEngine: Engine = {
  name: 'sievekv',
  columns: [
    { label: 'sievekv', style: 'async', coverage: 'all', calls: 'await db.put/get/del/batch; for await (db.iterator()); iterator().seek + next' },
    { label: 'sievekv sync', style: 'sync', coverage: 'all', calls: 'db.putSync/getSync/delSync/batchSync; for…of db.iterator(); iterator().seek + nextSync' },
    {
      // Not the default: table files mapped into memory, as LevelDB's are (its default on
      // 64-bit systems), for what it costs in RSS.
      label: 'sievekv mmap',
      style: 'sync',
      coverage: 'reads',
      readsFrom: 'sievekv sync',
      calls: 'as sievekv sync, opened with mmapReads: true (table files mapped into memory: not the default)',
      openOptions: { mmapReads: true },
    },
  ],
  version() {
    const pkg = JSON.parse(readFileSync(join(REPO_DIR, 'package.json'), 'utf8')) as { version: string };
    return `sievekv ${pkg.version} (this checkout)`;
  },
  options:
    'DB.open(dir) defaults: lz4, Bloom 10 bits/key per 2 KiB block filter, whole-table blocked Bloom 15 bits/key, memtable Bloom 10 bits/key, ' +
    'level 0 compacted at 4 files, slowed at 20, stopped at 36, writeBufferSize 4 MiB, blockSize 4 KiB, block cache 8 MiB, maxFileSize 2 MiB, block checksums verified on read',
  memory:
    'the memtable (writeBufferSize 4 MiB of nodes: keys, values, 12 + 4·height bytes of header and tower each, in one buffer ' +
    'of 4.5 MiB allocated up front, plus an 80 KiB Bloom); while a flush runs, the full memtable too (the flush ' +
    'worker reads its buffer in place, a SharedArrayBuffer); an idle 4.5 MiB buffer kept for the next memtable (up to two); the block cache (8 MiB of uncompressed blocks); open tables (up to maxOpenFiles 1000) with their index ' +
    'blocks and filters (per-block Bloom, whole-table blocked Bloom); worker threads for flushes and compactions (one on a machine of 2 cores or fewer, else two), each with its own V8 heap ' +
    '(young generation capped at 8 MiB; the compaction one holds the blocks it merges and the filter keys of the table it ' +
    'builds); a 32 KiB WAL frame; a 256 KiB readahead window per table iterator reading blocks in sequence (scans, and each merge input), up to four kept per thread for the next; ' +
    'in the sievekv mmap column, the pages of the mapped table files the reads touched (the kernel maps 64 KiB around each page first read), as in LevelDB\'s',
  async open(dir: string, { style, openOptions }: Column, synced: boolean) {
    const { DB } = await import('../../src/db.js');
    const db = await DB.open(dir, openOptions as OpenOptions | undefined);
    return style === 'async' ? asyncStore(db, synced) : syncStore(db, synced);
  },
};
