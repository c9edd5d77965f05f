/**
 * RocksDB through the npm package `rocksdb` (Level/rocksdb, abstract-leveldown 7 callback API;
 * prebuilt binary in the package), from bench/peers. Callbacks are wrapped in promises, as a
 * program using util.promisify or level-rocksdb does. A missing key comes back as a NotFound
 * error from the binding (that is the package's contract), turned into undefined here.
 */
import { loadPeer, peerFile, peerVersion } from './peers.js';
import { levelShape, type AsyncStore, type Column, type Engine, type ScanCount } from './store.js';

type Callback<T = void> = (err: Error | null | undefined, result?: T) => void;

interface RocksIterator extends AsyncIterable<[Buffer, Buffer]> {
  seek(target: Buffer): void;
  next(callback: (err: Error | null | undefined, key?: Buffer, value?: Buffer) => void): void;
  end(callback: Callback): void;
}

interface RocksDown {
  open(options: object, callback: Callback): void;
  close(callback: Callback): void;
  put(key: Buffer, value: Buffer, options: object, callback: Callback): void;
  get(key: Buffer, options: object, callback: Callback<Buffer>): void;
  del(key: Buffer, options: object, callback: Callback): void;
  batch(ops: readonly object[], options: object, callback: Callback): void;
  iterator(options: object): RocksIterator;
  getProperty(property: string): string;
}

type RocksFactory = (location: string) => RocksDown;

const PACKAGE = 'rocksdb';
const GET_OPTIONS = { asBuffer: true, fillCache: true } as const;
const SYNCED = { sync: true } as const;
const UNSYNCED = { sync: false } as const;

function done(resolve: () => void, reject: (e: Error) => void): Callback {
  return (err) => (err ? reject(err) : resolve());
}

function asyncStore(db: RocksDown, synced: boolean): AsyncStore {
  const writeOptions = synced ? SYNCED : UNSYNCED;
  return {
    style: 'async',
    put: (key, value) => new Promise<void>((resolve, reject) => db.put(key, value, writeOptions, done(resolve, reject))),
    batch(keys, values) {
      const ops = new Array<object>(keys.length);
      for (let i = 0; i < keys.length; i++) ops[i] = { type: 'put', key: keys[i]!, value: values[i]! };
      return new Promise<void>((resolve, reject) => db.batch(ops, writeOptions, done(resolve, reject)));
    },
    get: (key) =>
      new Promise<Buffer | undefined>((resolve, reject) =>
        db.get(key, GET_OPTIONS, (err, value) => {
          if (!err) resolve(value);
          else if (/NotFound/i.test(err.message)) resolve(undefined);
          else reject(err);
        }),
      ),
    del: (key) => new Promise<void>((resolve, reject) => db.del(key, writeOptions, done(resolve, reject))),
    async scan(reverse) {
      const count: ScanCount = { entries: 0, bytes: 0 };
      for await (const [k, v] of db.iterator({ reverse, keyAsBuffer: true, valueAsBuffer: true })) {
        count.entries++;
        count.bytes += k.length + v.length;
      }
      return count;
    },
    async seek(key) {
      const it = db.iterator({ keyAsBuffer: true, valueAsBuffer: true });
      try {
        it.seek(key);
        return await new Promise<Buffer | undefined>((resolve, reject) => it.next((err, k) => (err ? reject(err) : resolve(k))));
      } finally {
        await new Promise<void>((resolve, reject) => it.end(done(resolve, reject)));
      }
    },
    level0Files: () => Number(db.getProperty('rocksdb.num-files-at-level0')),
    shape: () => levelShape((level) => Number(db.getProperty(`rocksdb.num-files-at-level${level}`))),
    close: () => new Promise<void>((resolve, reject) => db.close(done(resolve, reject))),
  };
}

export const rocksdbEngine: Engine = {
  name: 'rocksdb',
  peer: PACKAGE,
  columns: [{ label: 'RocksDB', style: 'async', coverage: 'all', calls: 'put/get/del/batch(cb) in promises; for await (db.iterator()); iterator().seek + next(cb)' }],
  version() {
    const header = peerFile(PACKAGE, 'deps/rocksdb/rocksdb/include/rocksdb/version.h') ?? '';
    const part = (name: string): string => new RegExp(`#define ROCKSDB_${name} (\\d+)`).exec(header)?.[1] ?? '?';
    return `rocksdb ${peerVersion(PACKAGE)} (RocksDB ${part('MAJOR')}.${part('MINOR')}.${part('PATCH')})`;
  },
  options:
    'Level/rocksdb defaults: snappy, Bloom 10 bits/key (set by the binding), writeBufferSize 4 MiB, blockSize 4 KiB, ' +
    'LRU block cache 8 MiB, otherwise RocksDB defaults (leveled compaction, 2 background jobs)',
  memory:
    'memtables of 4 MiB (up to 2, RocksDB\'s max_write_buffer_number); LRU block cache 8 MiB; up to 1000 open tables, each ' +
    'with its index and filter blocks (outside the block cache: RocksDB\'s default); a thread pool for flushes and compactions',
  async open(dir: string, { style }: Column, synced: boolean) {
    if (style !== 'async') throw new Error('rocksdb has no synchronous API');
    const factory = loadPeer<RocksFactory>(PACKAGE);
    if (factory === null) throw new Error(`${PACKAGE} is not installed in bench/peers`);
    const db = factory(dir);
    await new Promise<void>((resolve, reject) => db.open({ createIfMissing: true }, done(resolve, reject)));
    return asyncStore(db, synced);
  },
};
