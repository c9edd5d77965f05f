/**
 * `sievekv verify` (tools/verify.ts) and `sievekv repair` through the CLI: a healthy database is
 * exit 0 and writes nothing; a flipped byte in a table, a damaged MANIFEST, a missing CURRENT or a
 * damaged WAL record is exit 1 naming the file (and offset); a torn tail of the newest WAL is a
 * note, not damage; progress goes to stderr on large databases; usage errors are exit 2. Repair
 * through the CLI turns a damaged database into a healthy one, and is LOCKED while it is open.
 */
import { describe, expect, it } from 'vitest';
import { DB, type OpenOptions } from '../../src/db.js';
import type { FileSystem } from '../../src/fs/file-system.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { DezhouRegionRouter } from '../../src/shard/dezhou-router.js';
import { verifyDB } from '../../src/tools/verify.js';
import { flipped, jsonLines, runCli } from './cli-support.js';

const OPTIONS: OpenOptions = { writeBufferSize: 16 * 1024, blockSize: 512, compression: 'none' };

/** A closed database in /db: tables on two levels and a WAL holding the last 20 writes. */
async function healthyDatabase(options: OpenOptions = {}): Promise<MemFileSystem> {
  const fs = new MemFileSystem();
  const db = await DB.open('/db', { ...OPTIONS, fs, ...options });
  for (let i = 0; i < 1500; i++) await db.put(`key-${String(i).padStart(5, '0')}`, `value ${i} `.repeat(3));
  await db.compactRange();
  for (let i = 0; i < 300; i += 3) await db.del(`key-${String(i).padStart(5, '0')}`);
  await db.compactRange('key-00000', 'key-00100');
  await db.close();
  // The tail: 20 records over two 32 KiB log blocks, under a write buffer they do not fill.
  const tail = await DB.open('/db', { ...OPTIONS, fs, ...options, writeBufferSize: 1 << 20 });
  for (let i = 0; i < 20; i++) await tail.put(`tail-${i}`, 'x'.repeat(3000), { sync: true });
  await tail.close();
  return fs;
}

const list = (fs: FileSystem, suffix: string): string[] =>
  fs
    .list('/db')
    .filter((n) => n.endsWith(suffix))
    .sort()
    .map((n) => `/db/${n}`);

function rewrite(fs: MemFileSystem, path: string, bytes: Uint8Array): void {
  const w = fs.createWritable(path);
  w.append(bytes);
  w.sync();
  w.close();
}

/** Every file's bytes, to show a command wrote nothing. */
function snapshot(fs: MemFileSystem, dir = '/db'): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of fs.list(dir)) {
    const path = `${dir}/${name}`;
    try {
      out.set(path, Buffer.from(fs.readFile(path)).toString('hex'));
    } catch {
      for (const [k, v] of snapshot(fs, path)) out.set(k, v);
    }
  }
  return out;
}

describe('verify', () => {
  it('a healthy database: exit 0, every table and the WAL checked, nothing written', async () => {
    const fs = await healthyDatabase();
    const before = snapshot(fs);
    const report = verifyDB('/db', { fs });
    expect(report.problems).toEqual([]);
    expect(report.healthy).toBe(true);
    expect(report.tables.checked).toBe(list(fs, '.ldb').length);
    expect(report.wals.records).toBe(20);
    const r = await runCli(['verify', '/db'], fs);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^CURRENT names \/db\/MANIFEST-\d+ \(last sequence \d+\)\n/);
    expect(r.stdout).toMatch(/\nOK: no damage found\n$/);
    expect(snapshot(fs)).toEqual(before);
    const j = jsonLines((await runCli(['verify', '--json', '/db'], fs)).stdout);
    expect(j).toHaveLength(1);
    expect(j[0]).toMatchObject({ kind: 'verify', healthy: true, problems: [] });
  });

  it('a flipped byte in a table: exit 1, the problem names the file and the block offset', async () => {
    const fs = await healthyDatabase();
    const table = list(fs, '.ldb')[0]!;
    rewrite(fs, table, flipped(fs.readFile(table), 600));
    const report = verifyDB('/db', { fs });
    expect(report.healthy).toBe(false);
    expect(report.problems.length).toBeGreaterThan(0);
    expect(report.problems.every((p) => p.file === table)).toBe(true);
    const offset = report.problems[0]!.offset!;
    expect(offset).toBeLessThanOrEqual(600);
    const r = await runCli(['verify', '/db'], fs);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`problem: ${table} at offset ${offset}: data block`);
    expect(r.stdout).toMatch(/\nDAMAGED: 1 problem\n$/);
  });

  it('a damaged MANIFEST, a missing CURRENT: exit 1 naming the file', async () => {
    const fs = await healthyDatabase();
    const manifest = list(fs, '').find((p) => p.includes('MANIFEST-'))!;
    const bytes = fs.readFile(manifest);
    rewrite(fs, manifest, flipped(bytes, 20));
    const damaged = verifyDB('/db', { fs });
    expect(damaged.healthy).toBe(false);
    expect(damaged.problems[0]).toMatchObject({ file: manifest, offset: 0 });
    expect(damaged.problems[0]!.reason).toMatch(/checksum/);
    rewrite(fs, manifest, bytes);
    fs.remove('/db/CURRENT');
    const r = await runCli(['verify', '/db'], fs);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('problem: /db/CURRENT: CURRENT is missing');
    // Without a MANIFEST the tables on disk are still checked.
    expect(r.stdout).toMatch(/tables: [1-9]\d* checked/);
  });

  it('WAL damage is a problem (as the open judges it); a torn tail of the newest WAL, a note', async () => {
    const fs = await healthyDatabase();
    const wal = list(fs, '.log').at(-1)!;
    const bytes = fs.readFile(wal);
    rewrite(fs, wal, flipped(bytes, 3000 * 2)); // the third record: records follow in later blocks
    const mid = verifyDB('/db', { fs });
    expect(mid.healthy).toBe(false);
    expect(mid.problems.some((p) => p.file === wal && /WAL damaged/.test(p.reason))).toBe(true);
    rewrite(fs, wal, flipped(bytes, bytes.length - 10)); // the last record, whole: damage too
    expect(verifyDB('/db', { fs }).problems.some((p) => p.file === wal)).toBe(true);
    rewrite(fs, wal, bytes.subarray(0, bytes.length - 10)); // the last record cut short: what a crash leaves
    const tail = verifyDB('/db', { fs });
    expect(tail.problems).toEqual([]);
    expect(tail.notes.some((n) => n.file === wal && /torn WAL tail/.test(n.reason))).toBe(true);
  });

  it('a sharded database is checked region by region', async () => {
    const fs = await healthyDatabase({ router: new DezhouRegionRouter() });
    const report = verifyDB('/db', { fs });
    expect(report.problems).toEqual([]);
    expect(report.regions).toBe(4);
    const regionTable = fs.list('/db/region-1').find((n) => n.endsWith('.ldb'))!;
    const path = `/db/region-1/${regionTable}`;
    rewrite(fs, path, flipped(fs.readFile(path), 100));
    const damaged = verifyDB('/db', { fs });
    expect(damaged.problems.map((p) => p.file)).toContain(path);
  });

  it('progress on stderr when asked: lines at each tenth, or a bar cleared at the end; none by default', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { fs, writeBufferSize: 1024, compression: 'none', l0CompactionTrigger: 1000, l0SlowdownTrigger: 1000, l0StopTrigger: 1000 });
    for (let i = 0; i < 2000; i++) await db.put(`k${String(i).padStart(5, '0')}`, 'v'.repeat(60));
    await db.close();
    const tables = list(fs, '.ldb').length;
    expect(tables).toBeGreaterThan(100);
    const quiet = await runCli(['verify', '/db'], fs);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
    const lines = await runCli(['verify', '/db'], fs, { progress: 'lines', progressTiming: { delayMs: 0 } });
    expect(lines.code).toBe(0);
    expect(lines.stdout).toBe(quiet.stdout);
    const progress = lines.stderr.trimEnd().split('\n');
    expect(progress.length).toBeGreaterThanOrEqual(9);
    expect(progress.length).toBeLessThanOrEqual(11);
    expect(progress[0]).toMatch(/^sievekv: verify: \d+% \(\S+ \S+ of \S+ \S+, \d+\/\d+ tables\)$/);
    const percents = progress.slice(0, -1).map((l) => Number(/: (\d+)%/.exec(l)![1]));
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    expect(progress.at(-1)).toMatch(new RegExp(`^sievekv: verify: done \\(.+, ${tables}/${tables} tables\\)$`));
    const bar = await runCli(['verify', '/db'], fs, { progress: 'bar', progressTiming: { delayMs: 0, everyMs: 0 } });
    expect(bar.stdout).toBe(quiet.stdout);
    expect(bar.stderr).toMatch(/^\rverify \[[#.]{24}\] +\d+% /);
    expect(bar.stderr).toContain(`[${'#'.repeat(24)}] 100%`);
    expect(bar.stderr.endsWith('\r\x1b[K')).toBe(true);
    expect(bar.stderr).not.toContain('\n');
  });

  it('usage errors are exit 2; a missing directory exit 1', async () => {
    const fs = new MemFileSystem();
    expect((await runCli(['verify'], fs)).code).toBe(2);
    expect((await runCli(['verify', '/a', '/b'], fs)).code).toBe(2);
    expect((await runCli(['verify', '--frob', '/db'], fs)).code).toBe(2);
    expect((await runCli(['repair', '--compression', 'zip', '/db'], fs)).code).toBe(2);
    const r = await runCli(['verify', '/nowhere'], fs);
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'sievekv: cannot open /nowhere: no such directory\n' });
  });
});

describe('repair (CLI)', () => {
  it('rebuilds a damaged database (exit 0, a report), which then verifies healthy', async () => {
    const fs = await healthyDatabase();
    fs.remove('/db/CURRENT');
    const table = list(fs, '.ldb')[0]!;
    rewrite(fs, table, flipped(fs.readFile(table), 600));
    expect((await runCli(['verify', '/db'], fs)).code).toBe(1);
    const r = await runCli(['repair', '/db'], fs);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^repaired \/db: CURRENT names \/db\/MANIFEST-\d+/);
    expect(r.stdout).toContain(`moved to lost/: /db/lost/${table.slice('/db/'.length)}`);
    expect(r.stdout).toMatch(/Some data could not be read/);
    const v = await runCli(['verify', '/db'], fs);
    expect(v.stdout).toMatch(/OK: no damage found/);
    expect(v.code).toBe(0);
    const j = jsonLines((await runCli(['repair', '--json', '/db'], fs)).stdout);
    expect(j[0]).toMatchObject({ kind: 'repair', dataLost: false });
  });

  it('is LOCKED (exit 1) while the database is open', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { fs });
    const r = await runCli(['repair', '/db'], fs);
    await db.close();
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^sievekv: LOCKED: \/db: the database is already open[^\n]*\n$/);
  });
});
