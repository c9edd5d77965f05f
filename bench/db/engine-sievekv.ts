/**
 * sievekv as bench/db drives it: `DB.open(dir)` with default options, through the public API
 * (src/db.ts), in both calling styles — the async methods every user gets, and the synchronous
 * twins.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DB, type BatchOperation } from '../../src/db.js';
import { REPO_DIR } from './peers.js';
import { levelShape, type AsyncStore, type Engine, type ScanCount, type Style, type SyncStore } from './store.js';

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
    close: () => db.close(),
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
  ],
  version() {
    const pkg = JSON.parse(readFileSync(join(REPO_DIR, 'package.json'), 'utf8')) as { version: string };
    return `sievekv ${pkg.version} (this checkout)`;
  },
  options:
    'DB.open(dir) defaults: lz4, Bloom 10 bits/key per 2 KiB block filter, memtable Bloom 10 bits/key, ' +
    'writeBufferSize 4 MiB, blockSize 4 KiB, block cache 8 MiB, maxFileSize 2 MiB, block checksums verified on read',
  async open(dir: string, style: Style, synced: boolean) {
    const db = await DB.open(dir);
    return style === 'async' ? asyncStore(db, synced) : syncStore(db, synced);
  },
};
