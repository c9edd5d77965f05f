/**
 * LMDB through `lmdb` (lmdb-js), from bench/peers. Reads are synchronous (mmap) in every style;
 * writes come in two: `await db.put` (lmdb-js commits each awaited put as its own asynchronous
 * transaction) and `putSync` (a synchronous transaction per put). So the async column runs only
 * the writes, and the sync column everything.
 *
 * Durability: unsynced stores open with `noSync: true` (commits reach the OS, not the disk —
 * what an unsynced write is in the LSM engines); synced ones with `overlappingSync: false`, so
 * every commit is flushed to the disk before it resolves or returns.
 */
import { loadPeer, peerVersion } from './peers.js';
import type { AsyncStore, Column, Engine, ScanCount, SyncStore } from './store.js';

interface RangeEntry {
  key: Buffer;
  value: Buffer;
}

interface LmdbDatabase {
  get(key: Buffer): Buffer | undefined;
  put(key: Buffer, value: Buffer): Promise<boolean>;
  putSync(key: Buffer, value: Buffer): void;
  remove(key: Buffer): Promise<boolean>;
  removeSync(key: Buffer): boolean;
  transaction<T>(action: () => T): Promise<T>;
  transactionSync<T>(action: () => T): T;
  getRange(options: { start?: Buffer; reverse?: boolean; limit?: number }): Iterable<RangeEntry>;
  close(): Promise<void>;
}

interface LmdbModule {
  open(options: object): LmdbDatabase;
  version: { versionString: string };
}

const PACKAGE = 'lmdb';

function scan(db: LmdbDatabase, reverse: boolean): ScanCount {
  const count: ScanCount = { entries: 0, bytes: 0 };
  for (const { key, value } of db.getRange({ reverse })) {
    count.entries++;
    count.bytes += key.length + value.length;
  }
  return count;
}

function seek(db: LmdbDatabase, target: Buffer): Buffer | undefined {
  for (const { key } of db.getRange({ start: target, limit: 1 })) return key;
  return undefined;
}

function asyncStore(db: LmdbDatabase): AsyncStore {
  return {
    style: 'async',
    put: (key, value) => db.put(key, value),
    batch: (keys, values) =>
      db.transaction(() => {
        for (let i = 0; i < keys.length; i++) void db.put(keys[i]!, values[i]!);
      }),
    get: (key) => Promise.resolve(db.get(key)),
    del: (key) => db.remove(key),
    scan: (reverse) => Promise.resolve(scan(db, reverse)),
    seek: (key) => Promise.resolve(seek(db, key)),
    close: () => db.close(),
  };
}

function syncStore(db: LmdbDatabase): SyncStore {
  return {
    style: 'sync',
    put: (key, value) => db.putSync(key, value),
    batch: (keys, values) =>
      db.transactionSync(() => {
        for (let i = 0; i < keys.length; i++) db.putSync(keys[i]!, values[i]!);
      }),
    get: (key) => db.get(key),
    del: (key) => void db.removeSync(key),
    scan: (reverse) => scan(db, reverse),
    seek: (key) => seek(db, key),
    close: () => db.close(),
  };
}

export const lmdbEngine: Engine = {
  name: 'lmdb',
  peer: PACKAGE,
  columns: [
    { label: 'LMDB async', style: 'async', coverage: 'writes', calls: 'await db.put/remove; await db.transaction(() => puts)' },
    { label: 'LMDB', style: 'sync', coverage: 'all', calls: 'db.putSync/removeSync/get; transactionSync; for…of db.getRange()' },
  ],
  version() {
    const lmdb = loadPeer<LmdbModule>(PACKAGE);
    return `lmdb ${peerVersion(PACKAGE)} (${lmdb?.version.versionString ?? 'LMDB ?'})`;
  },
  options:
    "lmdb-js open({ encoding: 'binary', keyEncoding: 'binary', compression: false }) + noSync: true " +
    '(fillsync: overlappingSync: false instead); OS page cache (mmap), no cache of its own',
  memory:
    'no cache of its own: the data file is memory-mapped, so every page of it the process touched while resident counts in ' +
    'its RSS (file-backed pages, which the kernel can drop); write transactions\' dirty pages',
  async open(dir: string, { style }: Column, synced: boolean) {
    const lmdb = loadPeer<LmdbModule>(PACKAGE);
    if (lmdb === null) throw new Error(`${PACKAGE} is not installed in bench/peers`);
    const db = lmdb.open({
      path: dir,
      encoding: 'binary',
      keyEncoding: 'binary',
      compression: false,
      ...(synced ? { overlappingSync: false } : { noSync: true }),
    });
    return style === 'async' ? asyncStore(db) : syncStore(db);
  },
};
