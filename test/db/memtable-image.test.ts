/**
 * The memtable image (db/memtable-image.ts): close() writes the memtable out, and the next open
 * reads it instead of replaying the WAL — only when that changes nothing. Every open below is
 * compared with an open of the same directory without the image, which must replay: the same
 * entries and the same last sequence (or the same error), whatever happened to the WAL or the
 * image between.
 *
 * MemFileSystem: jobs run on the database's thread on the next turn of the event loop, so a
 * close right after a memtable switch abandons the flush (the image then holds the memtable
 * being flushed, and the WAL after it is replayed on top).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { destroyDB } from '../../src/db/destroy.js';
import { decodeMemTableImage, MAX_IMAGE_WALS, MEMTABLE_IMAGE_FILE, readMemTableImage, writeMemTableImage } from '../../src/db/memtable-image.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import type { WritableFile } from '../../src/fs/file-system.js';
import { FaultyFileSystem } from '../../src/fs/faulty-fs.js';
import { crc32c, maskCrc } from '../../src/format/crc32c.js';
import { putFixed32 } from '../../src/format/coding.js';
import { levelDBHash } from '../../src/filter/leveldb-hash.js';
import { Lookup, MEMTABLE_BLOOM_SEED, MemTable, ValueType } from '../../src/memtable/memtable.js';
import { DezhouRegionRouter } from '../../src/shard/dezhou-router.js';
import { testSeed } from '../support/seed.js';

const DIR = '/db';
const IMAGE = `${DIR}/${MEMTABLE_IMAGE_FILE}`;
const DAMAGED = `${DIR}/damaged-image`;
/** Nothing flushes while a test writes, unless it writes more than this. */
const OPTIONS = { writeBufferSize: 256 * 1024 } as const;
const keyOf = (i: number): string => `key-${String(i).padStart(5, '0')}`;
const valueOf = (i: number, gen: number): string => `v${gen}-${i}-`.padEnd(40 + (i % 50), 'x');
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
/** Until `done` (at most 5 s): the resumed flush starts once reads pause for 50 ms (deferMergesDuringReads). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}
const level0 = (db: DB): number => Number(db.getProperty('sievekv.num-files-at-level0'));
const log = (fs: MemFileSystem): string => Buffer.from(fs.readFile(`${DIR}/LOG`)).toString();
const wals = (fs: MemFileSystem): string[] => fs.list(DIR).filter((n) => n.endsWith('.log')).sort();

/** A durable copy of every file in the database directory (a MemFileSystem of its own). */
function copyOf(fs: MemFileSystem, without: readonly string[] = []): MemFileSystem {
  const copy = new MemFileSystem();
  copy.mkdir(DIR);
  for (const name of fs.list(DIR)) {
    if (without.includes(name) || name === 'lost') continue;
    const file = copy.createWritable(`${DIR}/${name}`);
    file.append(fs.readFile(`${DIR}/${name}`));
    file.sync();
    file.close();
  }
  copy.syncDir(DIR);
  return copy;
}

/**
 * What an open shows: every entry, what point reads of keys 0-1199 find (they ask the memtables'
 * filters, which iteration does not), and the last sequence; or the code of the error it failed with.
 */
async function contents(fs: MemFileSystem, paranoidChecks = true): Promise<{ entries: [string, string][]; points: string[]; lastSequence: string } | { error: string }> {
  let db: DB;
  try {
    db = await DB.open(DIR, { ...OPTIONS, fs, paranoidChecks });
  } catch (err) {
    return { error: String((err as { code?: unknown }).code) };
  }
  try {
    const entries: [string, string][] = [];
    for await (const [k, v] of db.iterator()) entries.push([k.toString(), v.toString()]);
    const points: string[] = [];
    for (let i = 0; i < 1200; i++) points.push(db.getSync(keyOf(i))?.toString() ?? '-');
    const stats = JSON.parse(db.getProperty('sievekv.stats')!) as { lastSequence: number };
    return { entries, points, lastSequence: String(stats.lastSequence) };
  } finally {
    await db.close();
  }
}

/** Writes keys [0, n) twice over (some deleted in between) without a flush, then closes. */
async function written(n: number, fs = new MemFileSystem(), options: { memtableBloomBitsPerKey?: number } = {}): Promise<Map<string, string>> {
  const model = new Map<string, string>();
  const db = await DB.open(DIR, { ...OPTIONS, ...options, fs });
  for (let gen = 0; gen < 2; gen++) {
    for (let i = 0; i < n; i++) {
      const k = keyOf((i * 7919) % n);
      if (gen === 1 && i % 5 === 0) {
        db.delSync(k);
        model.delete(k);
      } else {
        db.putSync(k, valueOf(i, gen));
        model.set(k, valueOf(i, gen));
      }
    }
  }
  await db.close();
  return model;
}

/** Writes keys [0, n) past one write buffer and closes before the flush's turn: a flush abandoned, two WALs. */
async function abandonedFlush(fs: MemFileSystem, n = 3000): Promise<Map<string, string>> {
  const model = new Map<string, string>();
  const db = await DB.open(DIR, { ...OPTIONS, fs });
  for (let i = 0; i < n; i++) {
    db.putSync(keyOf(i), valueOf(i, 0));
    model.set(keyOf(i), valueOf(i, 0));
  }
  expect(wals(fs)).toHaveLength(2);
  await db.close();
  return model;
}

describe('memtable image: format', () => {
  it('round-trips a memtable, which takes inserts after it as if it had never been written out', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.uint8Array({ minLength: 0, maxLength: 12 }), fc.boolean(), fc.uint8Array({ maxLength: 40 })), { maxLength: 300 }),
        fc.array(fc.tuple(fc.uint8Array({ minLength: 0, maxLength: 12 }), fc.uint8Array({ maxLength: 40 })), { maxLength: 100 }),
        (before, after) => {
          const fs = new MemFileSystem();
          fs.mkdir(DIR);
          const original = new MemTable();
          before.forEach(([k, del, v], i) => original.add(i + 1, del ? ValueType.DELETION : ValueType.VALUE, k, v));
          const stamps = [{ number: 7, length: 1234, crc: 0xdeadbeef }];
          const other = new MemTable();
          other.add(1, ValueType.VALUE, new Uint8Array([1]), new Uint8Array([2]));
          const parts = [
            { wals: stamps, view: original.storageView(), maxSequence: original.maxSequence },
            { wals: [{ number: 9, length: 1, crc: 2 }], view: other.storageView(), maxSequence: other.maxSequence },
          ];
          writeMemTableImage(fs, DIR, parts);
          const image = decodeMemTableImage(fs.readFile(IMAGE));
          if (typeof image === 'string') throw new Error(image);
          // The open reads the file straight into arenas: the same parts.
          const fromFile = readMemTableImage(fs, IMAGE, (used) => new ArrayBuffer(used));
          if (typeof fromFile === 'string') throw new Error(fromFile);
          expect(fromFile.map((p) => [p.wals, p.state.maxSequence, entriesOf(new MemTable({ state: p.state }))])).toEqual(
            image.map((p) => [p.wals, p.state.maxSequence, entriesOf(new MemTable({ state: p.state }))]),
          );
          expect(image.map((p) => p.wals)).toEqual([stamps, [{ number: 9, length: 1, crc: 2 }]]);
          expect(image.map((p) => p.state.maxSequence)).toEqual([before.length, 1]);
          expect(entriesOf(new MemTable({ state: image[1]!.state }))).toEqual(entriesOf(other));
          const restored = new MemTable({ state: image[0]!.state, bloomBits: 1024 });
          // Both take the same later writes; they must then hold the same entries in the same order.
          after.forEach(([k, v], i) => {
            original.add(before.length + i + 1, ValueType.VALUE, k, v);
            restored.add(before.length + i + 1, ValueType.VALUE, k, v);
          });
          expect(entriesOf(restored)).toEqual(entriesOf(original));
          // The Bloom filter a restored memtable builds knows every key in it.
          for (const [k] of before) expect(restored.get(k, Number.MAX_SAFE_INTEGER)).not.toBe(Lookup.NOT_FOUND);
        },
      ),
      { seed: testSeed(), numRuns: 60 },
    );
  });

  it('reads any damaged or cut image as "not an image", never as other entries', () => {
    const fs = new MemFileSystem();
    fs.mkdir(DIR);
    const mem = new MemTable({ bloomBits: 1024 }); // its filter is saved too: damage there counts
    for (let i = 0; i < 50; i++) mem.add(i + 1, ValueType.VALUE, Buffer.from(keyOf(i)), Buffer.from(valueOf(i, 0)));
    writeMemTableImage(fs, DIR, [{ wals: [{ number: 3, length: 10, crc: 1 }], view: mem.storageView(), maxSequence: 50, filter: mem.completeFilter }]);
    const good = fs.readFile(IMAGE);
    fc.assert(
      fc.property(fc.nat(good.length - 1), fc.integer({ min: 1, max: 255 }), fc.nat(good.length - 1), (at, xor, cut) => {
        const flipped = Uint8Array.from(good);
        flipped[at]! ^= xor;
        expect(typeof decodeMemTableImage(flipped)).toBe('string');
        expect(typeof decodeMemTableImage(good.subarray(0, cut))).toBe('string');
        for (const bytes of [flipped, good.subarray(0, cut)]) {
          const file = fs.createWritable(DAMAGED);
          file.append(bytes);
          file.close();
          expect(typeof readMemTableImage(fs, DAMAGED, (used) => new ArrayBuffer(used))).toBe('string');
        }
      }),
      { seed: testSeed(), numRuns: 300 },
    );
  });
});

describe('memtable image: the Bloom filters', () => {
  it('saves a memtable\'s filter with it; a memtable over the part takes it at the options\' size and defers one otherwise', () => {
    const fs = new MemFileSystem();
    fs.mkdir(DIR);
    const key = (i: number): Uint8Array => Buffer.from(keyOf(i));
    const mem = new MemTable({ bloomBits: 1 << 14 });
    for (let i = 0; i < 500; i++) mem.add(i + 1, ValueType.VALUE, key(2 * i), Buffer.from(valueOf(i, 0)));
    const filter = mem.completeFilter!;
    expect(filter).not.toBeNull();
    // A memtable whose filter is deferred has none to save.
    const deferred = new MemTable({ bloomBits: 1 << 14, state: { list: mem.exportState(), maxSequence: 500 }, deferBloom: true });
    expect(deferred.completeFilter).toBeNull();
    writeMemTableImage(fs, DIR, [
      { wals: [{ number: 3, length: 10, crc: 1 }], view: mem.storageView(), maxSequence: 500, filter },
      { wals: [{ number: 4, length: 10, crc: 1 }], view: deferred.storageView(), maxSequence: 500, filter: deferred.completeFilter },
    ]);
    const image = decodeMemTableImage(fs.readFile(IMAGE));
    if (typeof image === 'string') throw new Error(image);
    expect(image[0]!.filter).toEqual(filter);
    expect(image[1]!.filter).toBeUndefined();
    const taken = new MemTable({ bloomBits: 1 << 14, state: image[0]!.state, bloom: image[0]!.filter!, deferBloom: true });
    expect(taken.bloomDeferred).toBe(false);
    expect(taken.completeFilter).toBe(image[0]!.filter);
    let excluded = 0;
    for (let i = 0; i < 1000; i++) {
      expect(taken.get(key(i), 1000)).toBe(i % 2 === 0 ? Lookup.FOUND : Lookup.NOT_FOUND);
      if (!taken.mayContainHash(levelDBHash(key(i), MEMTABLE_BLOOM_SEED))) excluded++;
    }
    expect(excluded).toBeGreaterThan(400); // the saved filter answers for absent keys at once
    // Options changed since: a filter of another size is not taken; one is deferred as before.
    const resized = new MemTable({ bloomBits: 1 << 15, state: image[0]!.state, bloom: image[0]!.filter!, deferBloom: true });
    expect(resized.bloomDeferred).toBe(true);
    for (let i = 0; i < 1000; i++) expect(resized.get(key(i), 1000)).toBe(i % 2 === 0 ? Lookup.FOUND : Lookup.NOT_FOUND);
  });

  it('the open takes the live memtable\'s filter from the image, and says so in LOG', async () => {
    const fs = new MemFileSystem();
    const model = await written(1000, fs);
    const db = await DB.open(DIR, { ...OPTIONS, fs });
    expect(log(fs)).toMatch(/0 WAL\(s\) replayed, 1 read from the memtable image \(1 Bloom filter\(s\) with it\)/);
    for (const [k, v] of model) expect(db.getSync(k)?.toString()).toBe(v);
    await db.close();
    // Without a memtable filter (memtableBloomBitsPerKey 0) there is none to save or take.
    const plain = new MemFileSystem();
    await written(1000, plain, { memtableBloomBitsPerKey: 0 });
    const again = await DB.open(DIR, { ...OPTIONS, memtableBloomBitsPerKey: 0, fs: plain });
    expect(log(plain)).toMatch(/1 read from the memtable image \(0 Bloom filter\(s\) with it\)/);
    await again.close();
  });
});

describe('memtable image: the flag that its WALs were synced', () => {
  it('round-trips, and an image with a flag this build does not know is not an image', () => {
    const fs = new MemFileSystem();
    fs.mkdir(DIR);
    const mem = new MemTable();
    for (let i = 0; i < 20; i++) mem.add(i + 1, ValueType.VALUE, Buffer.from(keyOf(i)), Buffer.from(valueOf(i, 0)));
    const parts = [{ wals: [{ number: 3, length: 10, crc: 1 }], view: mem.storageView(), maxSequence: 20 }];
    for (const synced of [false, true]) {
      writeMemTableImage(fs, DIR, parts, { walsSynced: synced });
      const image = decodeMemTableImage(fs.readFile(IMAGE));
      if (typeof image === 'string') throw new Error(image);
      expect(image.map((p) => p.walsSynced)).toEqual([synced]);
    }
    const unknown = Uint8Array.from(fs.readFile(IMAGE));
    putFixed32(unknown, 16, 3);
    expect(decodeMemTableImage(resealed(unknown))).toBe('unknown flags 3');
  });
});

/** Counts the fdatasyncs of WALs (an open's syncFile opens a WAL to append, then syncs it). */
class WalSyncs extends MemFileSystem {
  walSyncs = 0;
  override openAppendable(path: string): WritableFile {
    const file = super.openAppendable(path);
    if (!path.endsWith('.log')) return file;
    const count = (): void => void this.walSyncs++;
    return Object.assign(Object.create(file) as WritableFile, {
      sync(): void {
        count();
        file.sync();
      },
    });
  }
}

/** A copy of `fs`'s database directory, as it is now, in a WalSyncs (`image`, if given, in place of MEMTABLE). */
function countingCopy(fs: MemFileSystem, image?: Uint8Array): WalSyncs {
  const copy = new WalSyncs();
  copy.mkdir(DIR);
  for (const name of fs.list(DIR)) {
    const file = copy.createWritable(`${DIR}/${name}`);
    file.append(name === MEMTABLE_IMAGE_FILE && image !== undefined ? image : fs.readFile(`${DIR}/${name}`));
    file.close();
  }
  return copy;
}

/** `bytes` with its trailing masked CRC-32C made right again: a writer that wrote exactly these bytes. */
function resealed(bytes: Uint8Array): Uint8Array {
  const out = Uint8Array.from(bytes);
  putFixed32(out, out.length - 4, maskCrc(crc32c(out, 0, out.length - 4)));
  return out;
}

describe('memtable image: figures and links a checksum cannot vouch for', () => {
  // One part, one WAL: prefix 20 bytes; part header at 20 (max sequence u64, WAL count u32, one
  // WAL of 20 bytes, then words, entries, height), storage at 64.
  const fs = new MemFileSystem();
  fs.mkdir(DIR);
  const mem = new MemTable();
  for (let i = 0; i < 200; i++) mem.add(i + 1, ValueType.VALUE, Buffer.from(keyOf((i * 37) % 200)), Buffer.from(valueOf(i, 0)));
  writeMemTableImage(fs, DIR, [{ wals: [{ number: 3, length: 10, crc: 1 }], view: mem.storageView(), maxSequence: 200 }]);
  const good = fs.readFile(IMAGE);
  const STORAGE = 64;
  const word = (bytes: Uint8Array, i: number): number => new DataView(bytes.buffer, bytes.byteOffset).getInt32(STORAGE + i * 4, true);
  const setWord = (bytes: Uint8Array, i: number, v: number): void => new DataView(bytes.buffer, bytes.byteOffset).setInt32(STORAGE + i * 4, v, true);
  const first = word(good, 3); // the head's level-0 link (NEXT = 3)

  const cases: [string, (b: Uint8Array) => Uint8Array][] = [
    ['no parts', (b) => (putFixed32(b, 12, 0), b)],
    ['three parts', (b) => (putFixed32(b, 12, 3), b)],
    ['no WALs', (b) => (putFixed32(b, 28, 0), b)],
    ['65 WALs', (b) => (putFixed32(b, 28, 65), b)],
    ['more words than bytes', (b) => (putFixed32(b, 52, getWords(b) + 1), b)],
    ['fewer words than bytes', (b) => (putFixed32(b, 52, getWords(b) - 1), b)],
    ['one entry too many', (b) => (putFixed32(b, 56, 201), b)],
    ['one entry too few', (b) => (putFixed32(b, 56, 199), b)],
    ['height 0', (b) => (putFixed32(b, 60, 0), b)],
    ['height 13', (b) => (putFixed32(b, 60, 13), b)],
    ['no head', (b) => (setWord(b, 0, 5), b)],
    ['the head links past the storage', (b) => (setWord(b, 3, getWords(b) + 100), b)],
    ['a level-0 cycle', (b) => (setWord(b, first + 3, first), b)],
    ['a node taller than the list', (b) => (setWord(b, first, 13), b)],
    ['key and value lengths whose sum passes 2^32', (b) => (setWord(b, first + 1, 0x7fffffff), setWord(b, first + 2, 0x7fffffff), b)],
    ['keys out of order', (b) => (b.fill(0xff, STORAGE + (first + 3 + word(b, first)) * 4, STORAGE + (first + 3 + word(b, first)) * 4 + 4), b)],
    ['a sequence above the part\'s highest', (b) => (b.set([199, 0, 0, 0, 0, 0, 0, 0], 20), b)],
    ['bytes after the last part', (b) => Buffer.concat([b.subarray(0, b.length - 4), new Uint8Array(8), b.subarray(b.length - 4)])],
  ];
  function getWords(b: Uint8Array): number {
    return new DataView(b.buffer, b.byteOffset).getUint32(52, true);
  }

  it('the sound image decodes (the cases below change one thing each)', () => {
    expect(typeof decodeMemTableImage(good)).not.toBe('string');
  });
  for (const [name, change] of cases) {
    it(`${name}: a reason, not a memtable`, () => {
      const result = decodeMemTableImage(resealed(change(Uint8Array.from(good))));
      expect(typeof result, JSON.stringify(result).slice(0, 200)).toBe('string');
    });
  }

  it('any word of the storage replaced (checksum made right): a reason, or a memtable whose walk ends in order (property)', () => {
    fc.assert(
      fc.property(fc.nat(getWords(good) - 1), fc.integer(), (i, v) => {
        const bytes = Uint8Array.from(good);
        setWord(bytes, i, v);
        const result = decodeMemTableImage(resealed(bytes));
        if (typeof result === 'string') return;
        const restored = new MemTable({ state: result[0]!.state });
        const seen = entriesOf(restored);
        expect(seen).toHaveLength(200);
        const it = restored.iterator();
        for (const key of [keyOf(0), keyOf(199), keyOf(100)]) it.seek(Buffer.from(key), Number.MAX_SAFE_INTEGER); // no endless search
      }),
      { seed: testSeed(), numRuns: 300 },
    );
  });
});

function entriesOf(mem: MemTable): string[] {
  const out: string[] = [];
  const it = mem.iterator();
  for (it.seekToFirst(); it.valid; it.next()) out.push(`${Buffer.from(it.key).toString('hex')}@${it.seq}:${it.type}=${Buffer.from(it.value).toString('hex')}`);
  return out;
}

describe('memtable image: the database', () => {
  it('close leaves one; the next open reads it instead of replaying, and drops it once its WAL goes', async () => {
    const fs = new MemFileSystem();
    const model = await written(1000, fs); // within one write buffer: one memtable, one WAL
    expect(fs.exists(IMAGE)).toBe(true);
    const replayed = await contents(copyOf(fs, [MEMTABLE_IMAGE_FILE]));
    expect('entries' in replayed && replayed.entries).toEqual([...model].sort(([a], [b]) => (a < b ? -1 : 1)));

    const db = await DB.open(DIR, { ...OPTIONS, fs });
    expect(log(fs)).toMatch(/0 WAL\(s\) replayed, 1 read from the memtable image/);
    for (const [k, v] of model) expect(db.getSync(k)?.toString()).toBe(v);
    expect(db.getSync(keyOf(0))).toBeUndefined(); // deleted in the second pass
    await until(() => level0(db) > 0); // the background flush installs: the imaged WAL is obsolete, and the image with it
    expect(Number(db.getProperty('sievekv.num-files-at-level0'))).toBe(1);
    expect(fs.exists(IMAGE)).toBe(false);
    await db.close();
    expect(await contents(fs)).toEqual(replayed);
  });

  const setups: [string, (fs: MemFileSystem) => Promise<unknown>][] = [
    ['one memtable', (fs) => written(800, fs)],
    ['two (a flush abandoned)', (fs) => abandonedFlush(fs)],
  ];
  for (const [setup, write] of setups) {
    it(`${setup}: an open with the image equals an open replaying the WALs, whatever was damaged in between (paranoidChecks on and off)`, async () => {
      const fs = new MemFileSystem();
      await write(fs);
      const files = [...wals(fs), MEMTABLE_IMAGE_FILE];
      const damage = fc.oneof(
        fc.record({ file: fc.nat(files.length - 1), cut: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }) }),
        fc.record({ file: fc.nat(files.length - 1), at: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), xor: fc.integer({ min: 1, max: 255 }) }),
        fc.record({ file: fc.nat(files.length - 1), append: fc.uint8Array({ minLength: 1, maxLength: 64 }) }),
        fc.constant({ file: -1 }),
      );
      await fc.assert(
        fc.asyncProperty(damage, fc.boolean(), async (d, paranoid) => {
          const damaged = copyOf(fs);
          if (d.file >= 0) {
            const path = `${DIR}/${files[d.file]}`;
            const bytes = Uint8Array.from(damaged.readFile(path));
            let out = 'cut' in d ? bytes.subarray(0, Math.floor(bytes.length * d.cut)) : bytes;
            if ('at' in d) out[Math.floor(out.length * d.at)]! ^= d.xor;
            if ('append' in d) out = Buffer.concat([out, d.append]);
            damaged.remove(path);
            const file = damaged.createWritable(path);
            file.append(out);
            file.sync();
            file.close();
          }
          const expected = await contents(copyOf(damaged, [MEMTABLE_IMAGE_FILE]), paranoid);
          const seen = await contents(damaged, paranoid);
          expect(seen).toEqual(expected);
          // The image is used up to the first damaged WAL: not at all if that is its first, or the image itself.
          // (An open that failed, the same way both times, logs neither.)
          const imageUsed = d.file === -1 || (d.file > 0 && files[d.file] !== MEMTABLE_IMAGE_FILE);
          if (!('error' in seen)) expect(log(damaged).includes('read from the memtable image')).toBe(imageUsed);
          if (!imageUsed) expect(log(damaged)).toMatch(/memtable image not used \(/);
        }),
        { seed: testSeed(), numRuns: 50 },
      );
    });
  }

  it('a flush abandoned at close: the open resumes both memtables, and the live one keeps its WALs until its own flush', async () => {
    const fs = new MemFileSystem();
    const model = new Map<string, string>();
    const sorted = (): [string, string][] => [...model].sort(([a], [b]) => (a < b ? -1 : 1));
    for (const [k, v] of await abandonedFlush(fs)) model.set(k, v);
    const [flushing, live] = wals(fs).map((n) => Number(n.slice(0, 6)));
    const image = decodeMemTableImage(fs.readFile(IMAGE));
    if (typeof image === 'string') throw new Error(image);
    expect(image.map((p) => p.wals.map((w) => w.number))).toEqual([[flushing], [live]]);
    const expected = await contents(copyOf(fs, [MEMTABLE_IMAGE_FILE]));
    expect('entries' in expected && expected.entries).toEqual(sorted());

    const db = await DB.open(DIR, { ...OPTIONS, fs });
    expect(log(fs)).toMatch(/0 WAL\(s\) replayed, 2 read from the memtable image \(2 Bloom filter\(s\) with it\)/);
    expect(Number(db.getProperty('sievekv.num-files-at-level0'))).toBe(0);
    await until(() => level0(db) > 0); // the resumed flush installs: the flushed memtable's WAL goes, and the image
    expect(Number(db.getProperty('sievekv.num-files-at-level0'))).toBe(1);
    expect(wals(fs).map((n) => Number(n.slice(0, 6)))).not.toContain(flushing);
    expect(wals(fs).map((n) => Number(n.slice(0, 6)))).toContain(live);
    expect(fs.exists(IMAGE)).toBe(false);
    for (let i = 0; i < 3000; i += 3) {
      db.putSync(keyOf(i), valueOf(i, 1)); // into the resumed memtable, through a fresh WAL
      model.set(keyOf(i), valueOf(i, 1));
    }
    // A crash now keeps what the open synced (the resumed memtable's WAL); later writes may go.
    const crashed = await contents(fs.crashClone());
    if ('error' in crashed) throw new Error(crashed.error);
    expect(crashed.entries.map(([k]) => k)).toEqual(sorted().map(([k]) => k));
    for (const [k, v] of crashed.entries) expect([valueOf(Number(k.slice(4)), 0), valueOf(Number(k.slice(4)), 1)]).toContain(v);
    await db.close();
    // The live memtable holds two WALs now: its image names both, and the open reads it.
    const again = decodeMemTableImage(fs.readFile(IMAGE));
    if (typeof again === 'string') throw new Error(again);
    expect(again.map((p) => p.wals.map((w) => w.number))).toEqual([wals(fs).map((n) => Number(n.slice(0, 6)))]);
    expect(again[0]!.wals[0]!.number).toBe(live);
    const replayed = await contents(copyOf(fs, [MEMTABLE_IMAGE_FILE]));
    expect('entries' in replayed && replayed.entries).toEqual(sorted());
    expect(await contents(fs)).toEqual(replayed);
    expect(log(fs)).toMatch(/0 WAL\(s\) replayed, 2 read from the memtable image/);
  });

  it('close syncs the live WAL first, so a crash after it loses no write, and the open that uses the image syncs no WAL', async () => {
    const fs = new MemFileSystem();
    const model = await written(1000, fs); // unsynced puts and deletes, one WAL
    const afterCrash = fs.crashClone(); // only what was synced
    expect(await contents(afterCrash)).toEqual(await contents(copyOf(fs, [MEMTABLE_IMAGE_FILE])));
    const seen = await contents(afterCrash);
    expect('entries' in seen && seen.entries).toEqual([...model].sort(([a], [b]) => (a < b ? -1 : 1)));

    const counted = countingCopy(fs);
    const db = await DB.open(DIR, { ...OPTIONS, fs: counted });
    expect(log(counted)).toMatch(/1 read from the memtable image/);
    expect(counted.walSyncs).toBe(0);
    await db.close();

    // The same image without the flag (a close whose sync failed): the open syncs the WAL itself.
    const unflagged = Uint8Array.from(fs.readFile(IMAGE));
    putFixed32(unflagged, 16, 0);
    const again = countingCopy(fs, resealed(unflagged));
    const db2 = await DB.open(DIR, { ...OPTIONS, fs: again });
    expect(log(again)).toMatch(/1 read from the memtable image/);
    expect(again.walSyncs).toBe(1);
    await db2.close();
  });

  it('an open that uses a flagged image still syncs every WAL the image does not name', async () => {
    const fs = new MemFileSystem();
    await written(500, fs); // a flagged image naming the WAL the close synced
    const db = await DB.open(DIR, { ...OPTIONS, fs });
    for (let i = 0; i < 50; i++) db.putSync(keyOf(i), valueOf(i, 7)); // a new WAL, not synced
    // As a process killed now leaves it: the image's memtable not flushed yet, both WALs live.
    const killed = countingCopy(fs);
    await db.close();
    const reopened = await DB.open(DIR, { ...OPTIONS, fs: killed });
    // The image's filter is kept, and takes the keys replayed on top of it: the gets below ask it.
    expect(log(killed)).toMatch(/1 WAL\(s\) replayed, 1 read from the memtable image \(1 Bloom filter\(s\) with it\)/);
    expect(killed.walSyncs).toBe(1);
    for (let i = 0; i < 50; i++) expect(reopened.getSync(keyOf(i))?.toString()).toBe(valueOf(i, 7));
    await reopened.close();
  });

  it('close puts its flagged image in place only once the WAL sync has returned', async () => {
    let release = (): void => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    class HeldWalSync extends MemFileSystem {
      override createWritable(path: string): WritableFile {
        const file = super.createWritable(path);
        if (!path.endsWith('.log')) return file;
        return Object.assign(Object.create(file) as WritableFile, {
          syncAsync: (): Promise<void> => held.then(() => file.syncAsync()),
        });
      }
    }
    const fs = new HeldWalSync();
    const db = await DB.open(DIR, { ...OPTIONS, fs });
    for (let i = 0; i < 300; i++) db.putSync(keyOf(i), valueOf(i, 0));
    const closing = db.close();
    for (let i = 0; i < 5; i++) await nextTurn();
    expect(fs.exists(IMAGE)).toBe(false); // written to MEMTABLE.tmp, waiting for the sync
    release();
    await closing;
    const image = decodeMemTableImage(fs.readFile(IMAGE));
    if (typeof image === 'string') throw new Error(image);
    expect(image.map((p) => p.walsSynced)).toEqual([true]);
  });

  it('a close whose WAL sync fails leaves an image without the flag (logged), and the next open syncs the WAL', async () => {
    const inner = new MemFileSystem();
    const fs = new FaultyFileSystem(inner);
    const db = await DB.open(DIR, { ...OPTIONS, fs });
    for (let i = 0; i < 500; i++) db.putSync(keyOf(i), valueOf(i, 0));
    fs.inject({ ops: ['syncAsync'], path: /\.log$/ });
    await db.close();
    expect(log(inner)).toMatch(/could not sync the WAL at close/);
    const image = decodeMemTableImage(inner.readFile(IMAGE));
    if (typeof image === 'string') throw new Error(image);
    expect(image.map((p) => p.walsSynced)).toEqual([false]);
    const again = countingCopy(inner);
    const reopened = await DB.open(DIR, { ...OPTIONS, fs: again });
    expect(log(again)).toMatch(/1 read from the memtable image/);
    expect(again.walSyncs).toBe(1);
    for (let i = 0; i < 500; i++) expect(reopened.getSync(keyOf(i))?.toString()).toBe(valueOf(i, 0));
    await reopened.close();
  });

  it('is not used for WALs a later writer moved past (another program flushed them), and goes', async () => {
    const fs = new MemFileSystem();
    await written(300, fs);
    const stale = fs.readFile(IMAGE);
    // A session without the image: it replays, flushes, and its WAL goes; then the old image is put back.
    fs.remove(IMAGE);
    const db = await DB.open(DIR, { ...OPTIONS, fs });
    await db.compactRange();
    db.putSync('later', 'x');
    await db.close();
    const file = fs.createWritable(IMAGE);
    file.append(stale);
    file.close();
    const expected = await contents(copyOf(fs, [MEMTABLE_IMAGE_FILE]));
    const reopened = await DB.open(DIR, { ...OPTIONS, fs });
    expect(log(fs)).toMatch(/memtable image not used \(it holds WAL \d+ where the live WALs have/);
    expect(fs.exists(IMAGE)).toBe(false); // removed once the open succeeded
    await reopened.close();
    expect(await contents(fs)).toEqual(expected);
  });

  it('reopened with a smaller write buffer: an image past the replay\'s limit (3 write buffers) is replayed instead', async () => {
    const fs = new MemFileSystem();
    await written(1000, fs);
    const expected = await contents(copyOf(fs, [MEMTABLE_IMAGE_FILE]));
    const db = await DB.open(DIR, { fs, writeBufferSize: 32 * 1024 });
    expect(log(fs)).toMatch(/memtable image not used \(larger than the replay's limit of 98304 bytes\)/);
    expect(Number(db.getProperty('sievekv.num-files-at-level0'))).toBeGreaterThan(1); // the replay flushed as it went
    await db.close();
    expect(await contents(fs)).toEqual(expected);
  });

  it('a read-only open replays and leaves the image; a sharded open sets a stray one aside', async () => {
    const fs = new MemFileSystem();
    const model = await written(300, fs);
    const image = fs.readFile(IMAGE);
    const reader = await DB.open(DIR, { fs, readOnly: true });
    for (const [k, v] of model) expect(reader.getSync(k)?.toString()).toBe(v);
    await reader.close();
    expect(fs.readFile(IMAGE)).toEqual(image);

    const sharded = new MemFileSystem();
    const options = { ...OPTIONS, fs: sharded, router: new DezhouRegionRouter() };
    let db = await DB.open(DIR, options);
    db.putSync('k', 'v');
    await db.close();
    const file = sharded.createWritable(IMAGE);
    file.append(image);
    file.close();
    db = await DB.open(DIR, options);
    expect(log(sharded)).toMatch(/memtable image not used \(the database has several regions\)/);
    expect(sharded.exists(IMAGE)).toBe(false);
    expect(db.getSync('k')?.toString()).toBe('v');
    await db.close();
  });

  it(`a live memtable resumed over more than ${MAX_IMAGE_WALS} WALs (sessions that closed before its flush): no image names them, the replay does`, async () => {
    const fs = new MemFileSystem();
    const model = await abandonedFlush(fs);
    const lastPartWals = (): number => {
      const image = decodeMemTableImage(fs.readFile(IMAGE));
      if (typeof image === 'string') throw new Error(image);
      return image[image.length - 1]!.wals.length;
    };
    // Each session resumes, writes one key through a fresh WAL and closes before a flush of the live memtable.
    for (let session = 0; session < MAX_IMAGE_WALS + 2; session++) {
      const db = await DB.open(DIR, { ...OPTIONS, fs });
      db.putSync(`session-${session}`, 'x');
      model.set(`session-${session}`, 'x');
      await db.close();
      if (session === 10) expect(lastPartWals()).toBeGreaterThan(10); // the live memtable's WALs, all named
    }
    expect(wals(fs).length).toBeGreaterThan(MAX_IMAGE_WALS);
    if (fs.exists(IMAGE)) expect(lastPartWals()).toBeLessThanOrEqual(MAX_IMAGE_WALS);
    const expected = await contents(copyOf(fs, [MEMTABLE_IMAGE_FILE]));
    expect('entries' in expected && expected.entries).toEqual([...model].sort(([a], [b]) => (a < b ? -1 : 1)));
    expect(await contents(fs)).toEqual(expected);
  });

  it('a database of several regions writes none; destroyDB removes one', async () => {
    const sharded = new MemFileSystem();
    const db = await DB.open(DIR, { ...OPTIONS, fs: sharded, router: new DezhouRegionRouter() });
    for (let i = 0; i < 100; i++) db.putSync(keyOf(i), valueOf(i, 0));
    await db.close();
    expect(sharded.exists(IMAGE)).toBe(false);

    const fs = new MemFileSystem();
    await written(100, fs);
    expect(fs.exists(IMAGE)).toBe(true);
    const report = destroyDB(DIR, { fs });
    expect(report.removed).toContain(IMAGE);
    expect(report.kept).toEqual([]);
  });
});
