/**
 * Damage in a WAL is never taken for a torn tail (issue 9, item 1). A crash can only leave the
 * end of the newest WAL incomplete; everything else — a damaged record with a record that
 * verifies after it (same block or later), zeros in the middle, damage at the end of an older
 * WAL — is CORRUPTION under paranoidChecks, and with paranoidChecks off exactly the damaged
 * record is skipped, counted in `sievekv.stats` and LOG, and the WAL kept in lost/.
 */
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { isSieveError, type SieveError } from '../../src/errors.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { LogWriter } from '../../src/wal/log-writer.js';
import { WriteBatch } from '../../src/wal/write-batch.js';

const OPTIONS = { writeBufferSize: 8 * 1024 * 1024 } as const; // nothing flushes: every write stays in the WAL
const HEADER = 7;

const keyOf = (i: number): string => `key-${String(i).padStart(3, '0')}`;
const valueOf = (i: number): string => `value-${i}-`.padEnd(40, 'x');

function rewrite(fs: MemFileSystem, path: string, data: Uint8Array): void {
  const file = fs.createWritable(path);
  file.append(data);
  file.sync();
  file.close();
}

/** Ten synced puts, as the reproduction: one small WAL, every record in its first block. */
async function tenSyncedPuts(): Promise<{ fs: MemFileSystem; wal: string; starts: number[] }> {
  const fs = new MemFileSystem();
  const db = await DB.open('/db', { ...OPTIONS, fs });
  const wal = `/db/${fs.list('/db').find((n) => n.endsWith('.log'))!}`;
  const starts: number[] = [];
  for (let i = 0; i < 10; i++) {
    starts.push(fs.size(wal));
    await db.put(keyOf(i), valueOf(i), { sync: true });
  }
  await db.close();
  return { fs, wal, starts };
}

async function openError(fs: MemFileSystem, options: Record<string, unknown> = {}): Promise<SieveError> {
  try {
    const db = await DB.open('/db', { ...OPTIONS, fs, ...options });
    await db.close();
  } catch (err) {
    if (isSieveError(err)) return err;
    throw err;
  }
  throw new Error('open succeeded');
}

async function present(db: DB): Promise<number[]> {
  const keys: number[] = [];
  for (let i = 0; i < 10; i++) if ((await db.get(keyOf(i)))?.toString() === valueOf(i)) keys.push(i);
  return keys;
}

describe('damage in the last block of the newest WAL', () => {
  for (const [what, at] of [
    ['a payload bit', HEADER + 10],
    ['a checksum bit', 1],
    ['the length', 4],
    ['the type', 6],
  ] as const) {
    it(`${what} of record 2 of 10: CORRUPTION naming the WAL and offset; the WAL is left as it was`, async () => {
      const { fs, wal, starts } = await tenSyncedPuts();
      const bytes = fs.readFile(wal);
      bytes[starts[2]! + at]! ^= 0x04;
      rewrite(fs, wal, bytes);
      const files = fs.list('/db').sort();
      const err = await openError(fs);
      expect(err.code).toBe('CORRUPTION');
      expect(err.file).toBe(wal);
      expect(err.offset).toBe(starts[2]);
      expect(fs.list('/db').filter((n) => n !== 'LOG' && n !== 'LOG.old').sort()).toEqual(files.filter((n) => n !== 'LOG' && n !== 'LOG.old'));
      expect(Buffer.compare(fs.readFile(wal), bytes)).toBe(0);
    });
  }

  it('with paranoidChecks off: only record 2 is lost, counted in sievekv.stats and LOG, and the WAL is kept in lost/', async () => {
    const { fs, wal, starts } = await tenSyncedPuts();
    const bytes = fs.readFile(wal);
    bytes[starts[2]! + HEADER + 10]! ^= 0x04;
    rewrite(fs, wal, bytes);
    const db = await DB.open('/db', { ...OPTIONS, fs, paranoidChecks: false });
    expect(await present(db)).toEqual([0, 1, 3, 4, 5, 6, 7, 8, 9]);
    const stats = JSON.parse(db.getProperty('sievekv.stats')!);
    expect(stats.walRecordsSkipped).toBe(1);
    expect(stats.walBytesSkipped).toBe(starts[3]! - starts[2]!);
    expect(stats.walTornBytes).toBe(0);
    const log = new TextDecoder().decode(fs.readFile('/db/LOG'));
    expect(log).toContain(`skipped damaged WAL bytes at ${wal}:${starts[2]}`);
    const name = wal.slice('/db/'.length);
    expect(fs.list('/db/lost')).toContain(name);
    expect(Buffer.compare(fs.readFile(`/db/lost/${name}`), bytes)).toBe(0);
    await db.close();
  });

  it('zeros in the middle of the WAL, good records after them: CORRUPTION', async () => {
    const { fs, wal, starts } = await tenSyncedPuts();
    const bytes = fs.readFile(wal);
    bytes.fill(0, starts[3]!, starts[6]!);
    rewrite(fs, wal, bytes);
    const err = await openError(fs);
    expect(err.code).toBe('CORRUPTION');
    expect(err.offset).toBe(starts[3]);
    const db = await DB.open('/db', { ...OPTIONS, fs, paranoidChecks: false });
    expect(await present(db)).toEqual([0, 1, 2, 6, 7, 8, 9]);
    await db.close();
  });

  it('what a crash leaves is a torn tail: a record cut short, a length past the end, zeros from a sector on', async () => {
    for (const damage of ['cut', 'length-past-end', 'zeros-after', 'zeroed-from-sector'] as const) {
      const { fs, wal, starts } = await tenSyncedPuts();
      const bytes = fs.readFile(wal);
      let torn: Uint8Array;
      if (damage === 'cut') torn = bytes.subarray(0, starts[9]! + 20);
      else if (damage === 'length-past-end') {
        torn = new Uint8Array(bytes.length + 30).fill(0x5a); // a header claiming 0x5a5a bytes
        torn.set(bytes);
      } else if (damage === 'zeros-after') {
        torn = new Uint8Array(bytes.length + 300);
        torn.set(bytes);
      } else {
        // One more synced put of 3,000 bytes, written only up to a sector boundary: the file
        // system allotted the rest, which reads as zeros.
        const db = await DB.open('/db', { ...OPTIONS, fs });
        // The newest WAL: the one the reopen made (the replayed one stays until its flush installs).
        const newWal = `/db/${fs.list('/db').filter((n) => n.endsWith('.log')).sort().at(-1)!}`;
        const bigStart = fs.size(newWal);
        await db.put('big', 'b'.repeat(3000), { sync: true });
        await db.close();
        torn = fs.readFile(newWal).slice();
        torn.fill(0, Math.ceil((bigStart + HEADER + 100) / 512) * 512);
        rewrite(fs, newWal, torn);
      }
      if (damage !== 'zeroed-from-sector') rewrite(fs, wal, torn);
      const db = await DB.open('/db', { ...OPTIONS, fs });
      const kept = damage === 'cut' ? 9 : 10;
      expect(await present(db), damage).toEqual([...Array(kept).keys()]);
      expect(db.getSync('big')).toBeUndefined();
      await db.close();
    }
  });

  it('a whole last record that does not verify is damage, not a torn tail: a flipped bit, a garbage record', async () => {
    for (const damage of ['flip-last', 'garbage-record'] as const) {
      const { fs, wal, starts } = await tenSyncedPuts();
      const bytes = fs.readFile(wal);
      let damaged: Uint8Array;
      if (damage === 'flip-last') {
        damaged = bytes.slice();
        damaged[starts[9]! + HEADER + 3]! ^= 0x01;
      } else {
        damaged = new Uint8Array(bytes.length + HEADER + 20).fill(0x33);
        damaged.set(bytes);
        damaged[bytes.length + 4] = 20; // a length that fits: a whole record, with a wrong checksum
        damaged[bytes.length + 5] = 0;
        damaged[bytes.length + 6] = 1;
      }
      rewrite(fs, wal, damaged);
      const err = await openError(fs);
      expect(err.code, damage).toBe('CORRUPTION');
      expect(err.offset).toBe(damage === 'flip-last' ? starts[9] : bytes.length);
      const db = await DB.open('/db', { ...OPTIONS, fs, paranoidChecks: false });
      expect(await present(db)).toEqual(damage === 'flip-last' ? [0, 1, 2, 3, 4, 5, 6, 7, 8] : [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(JSON.parse(db.getProperty('sievekv.stats')!).walRecordsSkipped).toBe(1);
      await db.close();
    }
  });
});

describe('damage at the end of a WAL that is not the newest', () => {
  /** The ten-put WAL, then a newer WAL holding one later batch, as a crash before their flush leaves. */
  async function twoWals(): Promise<{ fs: MemFileSystem; older: string; newer: string }> {
    const { fs, wal } = await tenSyncedPuts();
    const number = Number(wal.slice('/db/'.length, -'.log'.length));
    const newer = `/db/${String(number + 100).padStart(6, '0')}.log`;
    const batch = new WriteBatch();
    batch.put(new TextEncoder().encode('later'), new TextEncoder().encode('write'));
    batch.setSequence(11); // right after the ten puts (1-10), as a writer numbers it
    const writer = new LogWriter(fs.createWritable(newer));
    writer.addRecord(batch.contents());
    writer.sync();
    writer.close();
    fs.syncDir('/db');
    return { fs, older: wal, newer };
  }

  it('garbage after the older WAL\'s last record is CORRUPTION; the same at the newest is a torn tail', async () => {
    const { fs, older, newer } = await twoWals();
    const good = fs.readFile(older);
    const garbage = new Uint8Array(good.length + 40);
    garbage.set(good);
    for (let i = good.length; i < garbage.length; i++) garbage[i] = 0xa5;
    rewrite(fs, older, garbage);
    const err = await openError(fs);
    expect(err.code).toBe('CORRUPTION');
    expect(err.file).toBe(older);
    rewrite(fs, older, good);
    const newerBytes = fs.readFile(newer);
    const tornNewer = new Uint8Array(newerBytes.length + 40).fill(0xa5);
    tornNewer.set(newerBytes);
    rewrite(fs, newer, tornNewer);
    const db = await DB.open('/db', { ...OPTIONS, fs });
    expect(await present(db)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(db.getSync('later')?.toString()).toBe('write');
    expect(JSON.parse(db.getProperty('sievekv.stats')!).walTornBytes).toBe(40);
    await db.close();
  });
});

describe('a WAL cut at a record boundary before a newer one: the batches lost show as a gap in the sequence', () => {
  /**
   * The ten-put WAL (sequences 1-10), then a newer WAL whose one batch continues at `sequence`, as
   * a crash before their flush leaves; no memtable image (the open replays both WALs) unless
   * `keepImage`: then the one the close wrote stands for the older WAL.
   */
  async function twoWals(sequence: number, { keepImage = false } = {}): Promise<{ fs: MemFileSystem; older: string; newer: string; starts: number[] }> {
    const { fs, wal, starts } = await tenSyncedPuts();
    if (keepImage) expect(fs.exists('/db/MEMTABLE')).toBe(true);
    else if (fs.exists('/db/MEMTABLE')) fs.remove('/db/MEMTABLE');
    const number = Number(wal.slice('/db/'.length, -'.log'.length));
    const newer = `/db/${String(number + 100).padStart(6, '0')}.log`;
    const batch = new WriteBatch();
    batch.put(new TextEncoder().encode('later'), new TextEncoder().encode('write'));
    batch.setSequence(sequence);
    const writer = new LogWriter(fs.createWritable(newer));
    writer.addRecord(batch.contents());
    writer.sync();
    writer.close();
    fs.syncDir('/db');
    return { fs, older: wal, newer, starts };
  }

  it('whole WALs whose sequences follow on: every write, nothing reported', async () => {
    const { fs } = await twoWals(11);
    const db = await DB.open('/db', { ...OPTIONS, fs });
    expect(await present(db)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(db.getSync('later')?.toString()).toBe('write');
    expect(JSON.parse(db.getProperty('sievekv.stats')!).walRecordsSkipped).toBe(0);
    await db.close();
  });

  it('the older WAL cut after its 7th record: CORRUPTION at the newer WAL\'s first batch; with paranoidChecks off, counted as skipped', async () => {
    const { fs, older, newer, starts } = await twoWals(11);
    rewrite(fs, older, fs.readFile(older).subarray(0, starts[7]!)); // records 7, 8 and 9 gone, cleanly
    const err = await openError(fs);
    expect(err.code).toBe('CORRUPTION');
    expect(err.file).toBe(newer);
    expect(err.message).toMatch(/sequence numbers 8 to 10 are missing/);
    const db = await DB.open('/db', { ...OPTIONS, fs, paranoidChecks: false });
    expect(await present(db)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(db.getSync('later')?.toString()).toBe('write');
    expect(JSON.parse(db.getProperty('sievekv.stats')!).walRecordsSkipped).toBe(1);
    await db.close();
  });

  it('records cut out of the middle of one WAL at their boundaries: CORRUPTION', async () => {
    const { fs, older, starts } = await twoWals(11);
    const bytes = fs.readFile(older);
    const holed = new Uint8Array(bytes.length - (starts[5]! - starts[3]!));
    holed.set(bytes.subarray(0, starts[3]!));
    holed.set(bytes.subarray(starts[5]!), starts[3]!);
    rewrite(fs, older, holed);
    const err = await openError(fs);
    expect(err.code).toBe('CORRUPTION');
    expect(err.file).toBe(older);
    expect(err.message).toMatch(/sequence numbers 4 to 5 are missing/);
  });

  it('with the memtable image standing for the older WAL, a gap after it is found all the same', async () => {
    // The image (written by the close) holds sequences 1-10; batches 11-13 went with a WAL lost
    // whole between it and the newer one.
    const { fs } = await twoWals(14, { keepImage: true });
    const err = await openError(fs);
    expect(err.code).toBe('CORRUPTION');
    expect(err.message).toMatch(/sequence numbers 11 to 13 are missing/);
    // The image was taken, not the older WAL replayed: only the newer WAL was read, and the LOG
    // says nothing of an image not used.
    const db = await DB.open('/db', { ...OPTIONS, fs, paranoidChecks: false });
    expect(await present(db)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(db.getSync('later')?.toString()).toBe('write');
    expect(JSON.parse(db.getProperty('sievekv.stats')!).walRecordsSkipped).toBe(1);
    await db.close();
    expect(new TextDecoder().decode(fs.readFile('/db/LOG'))).not.toMatch(/memtable image not used/);
  });

  it('with the memtable image, a newer WAL that follows on opens clean', async () => {
    const { fs } = await twoWals(11, { keepImage: true });
    const db = await DB.open('/db', { ...OPTIONS, fs });
    expect(await present(db)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(db.getSync('later')?.toString()).toBe('write');
    expect(JSON.parse(db.getProperty('sievekv.stats')!).walRecordsSkipped).toBe(0);
    await db.close();
    expect(new TextDecoder().decode(fs.readFile('/db/LOG'))).not.toMatch(/memtable image not used/);
  });
});

