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

  it('what a crash leaves is still a torn tail: garbage or zeros after the last record, a record cut short', async () => {
    for (const damage of ['garbage', 'zeros', 'cut', 'flip-last'] as const) {
      const { fs, wal, starts } = await tenSyncedPuts();
      const bytes = fs.readFile(wal);
      let torn: Uint8Array;
      if (damage === 'garbage' || damage === 'zeros') {
        torn = new Uint8Array(bytes.length + 300);
        torn.set(bytes);
        if (damage === 'garbage') for (let i = bytes.length; i < torn.length; i++) torn[i] = (i * 7919) & 0xff;
      } else if (damage === 'cut') torn = bytes.subarray(0, starts[9]! + 20);
      else {
        torn = bytes.slice();
        torn[starts[9]! + HEADER + 3]! ^= 0x01;
      }
      rewrite(fs, wal, torn);
      const db = await DB.open('/db', { ...OPTIONS, fs });
      expect(await present(db), damage).toEqual(damage === 'garbage' || damage === 'zeros' ? [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] : [0, 1, 2, 3, 4, 5, 6, 7, 8]);
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
    batch.setSequence(1000);
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
