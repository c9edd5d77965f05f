/**
 * SQLite through `better-sqlite3` (synchronous), from bench/peers: one table
 * `kv(key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID` (a B-tree ordered by key, no rowid
 * indirection), prepared statements, WAL journal. Each put is its own autocommit transaction
 * (the db_bench write); fillbatch writes 1000 rows per transaction.
 *
 * Durability: `synchronous = NORMAL` in WAL mode commits without an fsync (the WAL is synced at
 * checkpoints) — an unsynced write; fillsync uses `synchronous = FULL`, an fsync per commit.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadPeer, peerVersion } from './peers.js';
import type { Column, Engine, ScanCount, SyncStore } from './store.js';

interface Statement {
  run(...params: unknown[]): unknown;
  get(...params: unknown[]): unknown;
  iterate(...params: unknown[]): IterableIterator<unknown>;
  pluck(on?: boolean): Statement;
  raw(on?: boolean): Statement;
}

interface SqliteDatabase {
  pragma(source: string): unknown;
  exec(source: string): void;
  prepare(source: string): Statement;
  transaction<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void;
  close(): void;
}

type SqliteConstructor = new (filename: string) => SqliteDatabase;

const PACKAGE = 'better-sqlite3';

function sqliteStore(db: SqliteDatabase): SyncStore {
  const put = db.prepare('INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)');
  const get = db.prepare('SELECT value FROM kv WHERE key = ?').pluck();
  const del = db.prepare('DELETE FROM kv WHERE key = ?');
  const ascending = db.prepare('SELECT key, value FROM kv ORDER BY key').raw();
  const descending = db.prepare('SELECT key, value FROM kv ORDER BY key DESC').raw();
  const seek = db.prepare('SELECT key FROM kv WHERE key >= ? ORDER BY key LIMIT 1').pluck();
  const batch = db.transaction((keys: readonly Buffer[], values: readonly Buffer[]) => {
    for (let i = 0; i < keys.length; i++) put.run(keys[i], values[i]);
  });
  return {
    style: 'sync',
    put: (key, value) => void put.run(key, value),
    batch: (keys, values) => batch(keys, values),
    get: (key) => get.get(key) as Buffer | undefined,
    del: (key) => void del.run(key),
    scan(reverse) {
      const count: ScanCount = { entries: 0, bytes: 0 };
      for (const row of (reverse ? descending : ascending).iterate()) {
        const [k, v] = row as [Buffer, Buffer];
        count.entries++;
        count.bytes += k.length + v.length;
      }
      return count;
    },
    seek: (key) => seek.get(key) as Buffer | undefined,
    close: () => Promise.resolve(db.close()),
  };
}

export const sqliteEngine: Engine = {
  name: 'sqlite',
  peer: PACKAGE,
  columns: [{ label: 'SQLite', style: 'sync', coverage: 'all', calls: 'prepared INSERT OR REPLACE / SELECT / DELETE; .iterate() ORDER BY key; db.transaction' }],
  version() {
    const Database = loadPeer<SqliteConstructor>(PACKAGE);
    let sqlite = '?';
    if (Database !== null) {
      const db = new Database(':memory:');
      sqlite = String(db.prepare('SELECT sqlite_version()').pluck().get());
      db.close();
    }
    return `better-sqlite3 ${peerVersion(PACKAGE)} (SQLite ${sqlite})`;
  },
  options:
    'table kv(key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID; journal_mode WAL, synchronous NORMAL ' +
    '(fillsync: FULL), cache_size 8 MiB (as the LSMs\' block caches), page size 4 KiB (default), automatic checkpoints',
  memory: 'page cache 8 MiB (cache_size); the WAL index (a shared-memory map of -shm); prepared statements',
  async open(dir: string, { style }: Column, synced: boolean) {
    if (style !== 'sync') throw new Error('better-sqlite3 has only a synchronous API');
    const Database = loadPeer<SqliteConstructor>(PACKAGE);
    if (Database === null) throw new Error(`${PACKAGE} is not installed in bench/peers`);
    mkdirSync(dir, { recursive: true });
    const db = new Database(join(dir, 'kv.sqlite'));
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${synced ? 'FULL' : 'NORMAL'}`);
    db.pragma('cache_size = -8192');
    db.exec('CREATE TABLE IF NOT EXISTS kv (key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID');
    return sqliteStore(db);
  },
};
