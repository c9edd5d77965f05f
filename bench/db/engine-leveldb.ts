/**
 * LevelDB through `classic-level` (a devDependency of sievekv, LevelDB 1.20 inside): its promise
 * API, and its one synchronous twin, `getSync`, for point reads. The package (and its native
 * binding) is imported when a database is opened, so other engines' child processes do not
 * carry it in their RSS.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ClassicLevel } from 'classic-level';
import { levelShape, type AsyncStore, type Column, type Engine, type ScanCount, type SyncStore } from './store.js';

type Db = ClassicLevel<Buffer, Buffer>;
type PutOp = { type: 'put'; key: Buffer; value: Buffer };

const SYNCED = { sync: true } as const;

function asyncStore(db: Db, synced: boolean): AsyncStore {
  const writeOptions = synced ? SYNCED : {};
  return {
    style: 'async',
    put: (key, value) => db.put(key, value, writeOptions),
    batch(keys, values) {
      const ops = new Array<PutOp>(keys.length);
      for (let i = 0; i < keys.length; i++) ops[i] = { type: 'put', key: keys[i]!, value: values[i]! };
      return db.batch(ops, writeOptions);
    },
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
        return (await it.next())?.[0];
      } finally {
        await it.close();
      }
    },
    shape: () => shapeOf(db),
    level0Files: () => Number(db.getProperty('leveldb.num-files-at-level0')),
    close: () => db.close(),
  };
}

function shapeOf(db: Db): string {
  return levelShape((level) => Number(db.getProperty(`leveldb.num-files-at-level${level}`)));
}

function syncStore(db: Db): SyncStore {
  return {
    style: 'sync',
    get: (key) => db.getSync(key),
    shape: () => shapeOf(db),
    level0Files: () => Number(db.getProperty('leveldb.num-files-at-level0')),
    close: () => db.close(),
  };
}

export const leveldbEngine: Engine = {
  name: 'leveldb',
  columns: [
    { label: 'LevelDB', style: 'async', coverage: 'all', calls: 'await db.put/get/del/batch; for await (db.iterator()); iterator().seek + next' },
    { label: 'LevelDB sync', style: 'sync', coverage: 'point-reads', readsFrom: 'LevelDB', calls: 'db.getSync (its only synchronous twin)' },
  ],
  version() {
    const require = createRequire(import.meta.url);
    const pkg = JSON.parse(readFileSync(require.resolve('classic-level/package.json'), 'utf8')) as { version: string };
    return `classic-level ${pkg.version} (LevelDB 1.20)`;
  },
  options:
    "classic-level defaults, keyEncoding/valueEncoding 'buffer': snappy, Bloom 10 bits/key (set by classic-level), " +
    'writeBufferSize 4 MiB, blockSize 4 KiB, LRU block cache 8 MiB, maxFileSize 2 MiB, checksums not verified on read (LevelDB default)',
  memory:
    'memtable 4 MiB (arena) and, while it is written to level 0, the previous one; LRU block cache 8 MiB; up to 990 open ' +
    'tables, each with its index and filter blocks; one background compaction thread',
  async open(dir: string, { style }: Column, synced: boolean) {
    const { ClassicLevel } = await import('classic-level');
    const db: Db = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    return style === 'async' ? asyncStore(db, synced) : syncStore(db);
  },
};
