/**
 * The close mark (src/db/close-mark.ts): a close with no background error ends the info log with
 * a line naming the MANIFEST CURRENT points at and its length, and an open believes the directory
 * untouched only while all three still agree — a later open, a changed CURRENT or MANIFEST,
 * another last line in LOG (what a LevelDB's open leaves) each make it look for another program's
 * lock again.
 */
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { closedAsMarked } from '../../src/db/close-mark.js';
import type { FileLock, LockOptions } from '../../src/fs/file-system.js';
import { FaultyFileSystem } from '../../src/fs/faulty-fs.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

const DIR = '/db';
const text = (fs: MemFileSystem, name: string): string => Buffer.from(fs.readFile(`${DIR}/${name}`)).toString('latin1');

function append(fs: MemFileSystem, name: string, data: string): void {
  const file = fs.openAppendable(`${DIR}/${name}`);
  file.append(Buffer.from(data, 'latin1'));
  file.close();
}

async function closedDatabase(): Promise<MemFileSystem> {
  const fs = new MemFileSystem();
  const db = await DB.open(DIR, { fs });
  await db.put('k', 'v');
  await db.close();
  return fs;
}

/** A MemFileSystem that records, for each lock taken, whether its options would skip the look for a foreign lock. */
class LockRecordingFs extends MemFileSystem {
  readonly skips: boolean[] = [];
  override lock(path: string, options?: LockOptions): FileLock {
    this.skips.push(options?.skipForeignCheck?.() ?? false);
    return super.lock(path);
  }
}

describe('the close mark', () => {
  it("is LOG's last line after a clean close, naming CURRENT's MANIFEST and its length", async () => {
    const fs = await closedDatabase();
    const last = text(fs, 'LOG').trimEnd().split('\n').pop()!;
    const manifest = text(fs, 'CURRENT').trim();
    expect(last).toMatch(new RegExp(`^\\S+ closed: ${manifest}, ${fs.size(`${DIR}/${manifest}`)} bytes$`));
    expect(closedAsMarked(fs, DIR)).toBe(true);
  });

  it('no longer holds once anything opened the database, or changed LOG, CURRENT or the MANIFEST', async () => {
    // A writable open that has not closed yet: it rotated LOG and wrote a new MANIFEST.
    const opened = await closedDatabase();
    const db = await DB.open(DIR, { fs: opened });
    expect(closedAsMarked(opened, DIR)).toBe(false);
    await db.close();
    expect(closedAsMarked(opened, DIR)).toBe(true);

    const logged = await closedDatabase();
    append(logged, 'LOG', '2026/11/28-21:00:00.000000 7f00 Recovering log #9\n'); // another program's line
    expect(closedAsMarked(logged, DIR)).toBe(false);

    const manifestGrew = await closedDatabase();
    append(manifestGrew, text(manifestGrew, 'CURRENT').trim(), '\x00');
    expect(closedAsMarked(manifestGrew, DIR)).toBe(false);

    const repointed = await closedDatabase();
    const current = repointed.createWritable(`${DIR}/CURRENT`);
    current.append(Buffer.from('MANIFEST-000999\n'));
    current.close();
    expect(closedAsMarked(repointed, DIR)).toBe(false);

    const noLog = await closedDatabase();
    noLog.rename(`${DIR}/LOG`, `${DIR}/LOG.old`);
    expect(closedAsMarked(noLog, DIR)).toBe(false);
    expect(closedAsMarked(new MemFileSystem(), DIR)).toBe(false);
  });

  it('a read-only open and close leave it, as they write nothing', async () => {
    const fs = await closedDatabase();
    const db = await DB.open(DIR, { fs, readOnly: true });
    expect(db.getSync('k')?.toString()).toBe('v');
    await db.close();
    expect(closedAsMarked(fs, DIR)).toBe(true);
  });

  it('is not written by a close after a background error', async () => {
    const fs = new FaultyFileSystem(new MemFileSystem());
    const db = await DB.open(DIR, { fs });
    await db.put('k', 'v');
    fs.inject({ ops: ['create'], path: /\.ldb$/, sticky: true });
    await expect(db.compactRange()).rejects.toThrow(); // its flush cannot create the table: latched
    await db.close();
    expect(text(fs.inner as MemFileSystem, 'LOG')).not.toMatch(/closed: MANIFEST/);
    expect(closedAsMarked(fs, DIR)).toBe(false);
  });

  it('decides whether a writable open looks for a foreign lock', async () => {
    const fs = new LockRecordingFs();
    await (await DB.open(DIR, { fs })).close(); // a new directory: no mark yet
    await (await DB.open(DIR, { fs })).close(); // after a clean close
    append(fs, 'LOG', 'not the mark\n');
    await (await DB.open(DIR, { fs })).close();
    expect(fs.skips).toEqual([false, true, false]);
  });
});
