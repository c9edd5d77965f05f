/**
 * The CLI's database commands (get, scan, stats, compact, put, del, checkpoint) on a small
 * database made with `DB` in a temporary directory, its usage handling (help per command,
 * --version, unknown commands and options: exit 2), and the bin itself as a child process (exit
 * code, the one stderr line, progress on a piped stderr). A database another process holds open:
 * cli-live.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { USAGE } from '../../src/tools/cli.js';
import { rng, testSeed } from '../support/seed.js';
import { jsonLines, runCli } from './cli-support.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

let root: string;
let dir: string;
/** The model: what the database holds, hex key → hex value. */
const model = new Map<string, string>();

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'sievekv-cli-'));
  dir = join(root, 'db');
  const db = await DB.open(dir, { writeBufferSize: 16 * 1024 });
  const next = rng(testSeed() ^ 0xc11);
  const put = async (k: Uint8Array, v: Uint8Array): Promise<void> => {
    await db.put(k, v);
    model.set(hex(k), hex(v));
  };
  for (let i = 0; i < 600; i++) {
    await put(Buffer.from(`user:${String(i).padStart(4, '0')}`), Buffer.from(`name ${i} `.repeat(1 + (i % 5))));
  }
  for (let i = 0; i < 40; i++) {
    const k = new Uint8Array(1 + Math.floor(next() * 8)).map(() => (next() * 256) | 0);
    k[0] = 0xf0; // binary keys sort after the text ones
    await put(k, new Uint8Array(10).map(() => (next() * 256) | 0));
  }
  for (let i = 0; i < 600; i += 7) {
    const k = Buffer.from(`user:${String(i).padStart(4, '0')}`);
    await db.del(k);
    model.delete(hex(k));
  }
  await db.close();
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

const sortedModel = (): [string, string][] =>
  [...model].sort(([a], [b]) => Buffer.compare(Buffer.from(a, 'hex'), Buffer.from(b, 'hex')));

describe('get', () => {
  it('prints a printable value as text, and bare hex with --hex (KEY in hex too)', async () => {
    const r = await runCli(['get', dir, 'user:0001']);
    expect(r).toEqual({ code: 0, stdout: 'name 1 name 1 \n', stderr: '' });
    const h = await runCli(['get', '--hex', dir, hex(Buffer.from('user:0001'))]);
    expect(h).toEqual({ code: 0, stdout: `${hex(Buffer.from('name 1 name 1 '))}\n`, stderr: '' });
  });

  it('prints a binary value as 0x-hex', async () => {
    const [k, v] = sortedModel().at(-1)!;
    const r = await runCli(['get', '--hex', dir, k]);
    expect(r.stdout).toBe(`${v}\n`);
    const raw = await runCli(['get', dir, 'user:0002']);
    expect(raw.code).toBe(0);
  });

  it('a missing or deleted key: exit 1 and one line on stderr', async () => {
    expect(await runCli(['get', dir, 'user:0007'])).toEqual({ code: 1, stdout: '', stderr: 'sievekv: key not found: "user:0007"\n' });
    expect((await runCli(['get', dir, 'nope'])).code).toBe(1);
  });

  it('a bad hex key is a usage error', async () => {
    const r = await runCli(['get', '--hex', dir, 'xyz']);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe('sievekv: KEY is not hex: "xyz"');
  });
});

describe('scan', () => {
  it('--json lists every live entry in key order, as {key, value} in hex', async () => {
    const r = await runCli(['scan', '--json', dir]);
    expect(r.code).toBe(0);
    expect(jsonLines(r.stdout).map((l) => [l.key, l.value])).toEqual(sortedModel());
  });

  it('bounds, limit and reverse select what the model says', async () => {
    const all = sortedModel();
    const inRange = all.filter(([k]) => {
      const s = Buffer.from(k, 'hex').toString('latin1');
      return s >= 'user:0100' && s < 'user:0200';
    });
    const r = await runCli(['scan', '--json', '--gte', 'user:0100', '--lt', 'user:0200', dir]);
    expect(jsonLines(r.stdout).map((l) => [l.key, l.value])).toEqual(inRange);
    const rev = await runCli(['scan', '--json', '--reverse', '--limit', '5', '--lte', 'user:0200', dir]);
    const upTo = all.filter(([k]) => Buffer.compare(Buffer.from(k, 'hex'), Buffer.from('user:0200')) <= 0);
    expect(jsonLines(rev.stdout).map((l) => [l.key, l.value])).toEqual(upTo.reverse().slice(0, 5));
    const hexBound = await runCli(['scan', '--json', '--hex', '--gt', 'f0', dir]);
    expect(jsonLines(hexBound.stdout).map((l) => l.key)).toEqual(all.map(([k]) => k).filter((k) => k > 'f0'));
  });

  it('text lines are KEY => VALUE, printable quoted and binary in 0x-hex; --hex prints bare hex', async () => {
    const r = await runCli(['scan', '--limit', '2', dir]);
    expect(r.stdout).toBe('"user:0001" => "name 1 name 1 "\n"user:0002" => "name 2 name 2 name 2 "\n');
    const h = await runCli(['scan', '--hex', '--limit', '1', dir]);
    expect(h.stdout).toBe(`${hex(Buffer.from('user:0001'))} => ${hex(Buffer.from('name 1 name 1 '))}\n`);
    const b = await runCli(['scan', '--reverse', '--limit', '1', dir]);
    expect(b.stdout).toMatch(/^0xf0[0-9a-f]* => 0x[0-9a-f]{20}\n$/);
  });

  it('a bad --limit, both --gt and --gte, or a missing DIR: exit 2', async () => {
    expect((await runCli(['scan', '--limit', '-3', dir])).code).toBe(2);
    expect((await runCli(['scan', '--gt', 'a', '--gte', 'b', dir])).code).toBe(2);
    expect((await runCli(['scan'])).code).toBe(2);
  });
});

describe('stats and compact', () => {
  it("stats prints LevelDB's leveldb.stats table, totals and keys; --json has every level and sievekv.stats", async () => {
    const r = await runCli(['stats', dir]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout.split('\n');
    expect(lines.slice(0, 3)).toEqual([
      '                               Compactions',
      'Level  Files Size(MB) Time(sec) Read(MB) Write(MB)',
      '--------------------------------------------------',
    ]);
    const j = jsonLines((await runCli(['stats', '--json', dir])).stdout)[0] as unknown as {
      levels: { level: number; files: number; bytes: number }[];
      stats: { levels: { level: number; files: number; bytes: number }[] };
      estimateNumKeys: number;
      lastSequence: number;
    };
    // One table line per level with files, its files and size as --json (and sievekv.stats) say.
    const rows = lines.slice(3).filter((l) => /^ +\d+ +\d+ /.test(l));
    expect(rows.map((l) => Number(l.trim().split(/\s+/)[0]))).toEqual(j.levels.filter((l) => l.files > 0).map((l) => l.level));
    for (const row of rows) {
      const [level, files, size] = row.trim().split(/\s+/).map(Number);
      expect(files).toBe(j.levels[level!]!.files);
      expect(size).toBe(Number((j.levels[level!]!.bytes / 1048576).toFixed(2)));
    }
    const total = j.levels.reduce((n, l) => n + l.files, 0);
    // "1 table", "2 tables": how many the background flushes left by now varies with timing.
    expect(r.stdout).toMatch(new RegExp(`^total: ${total} ${total === 1 ? 'table' : 'tables'}, `, 'm'));
    expect(r.stdout).toMatch(new RegExp(`^keys: about ${j.estimateNumKeys.toLocaleString('en-US')} distinct`, 'm'));
    expect(r.stdout).toMatch(new RegExp(`^last sequence: ${j.lastSequence}$`, 'm'));
    expect(j.levels.map((l) => l.level)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    for (const l of j.stats.levels) expect(j.levels[l.level]).toMatchObject({ level: l.level, files: l.files, bytes: l.bytes });
    // Distinct keys ever written (deleted ones may still be counted until compaction drops them).
    expect(j.estimateNumKeys).toBeGreaterThan(model.size * 0.9);
    expect(j.estimateNumKeys).toBeLessThan(640 * 1.1);
  });

  it('compact flushes and compacts; the contents read the same afterwards', async () => {
    const r = await runCli(['compact', '--json', dir]);
    expect(r.code).toBe(0);
    const [c] = jsonLines(r.stdout) as unknown as { after: { files: number }[] }[];
    expect(c!.after.reduce((n, l) => n + l.files, 0)).toBeGreaterThan(0);
    const s = await runCli(['scan', '--json', dir]);
    expect(jsonLines(s.stdout).map((l) => [l.key, l.value])).toEqual(sortedModel());
  });

  it('a missing directory, a directory without a database: one line, exit 1', async () => {
    const missing = join(root, 'nope');
    expect(await runCli(['stats', missing])).toEqual({ code: 1, stdout: '', stderr: `sievekv: cannot open ${missing}: no such directory\n` });
    expect(await runCli(['get', root, 'k'])).toEqual({ code: 1, stdout: '', stderr: `sievekv: ${root} holds no database (no CURRENT file)\n` });
    expect((await runCli(['put', missing, 'k', 'v'])).stderr).toBe(`sievekv: cannot open ${missing}: no such directory\n`);
  });
});

describe('put, del and checkpoint', () => {
  it('put and del write (synced) and print nothing; get and scan see them; --hex takes hex', async () => {
    const copyDir = join(root, 'pd');
    const db = await DB.open(copyDir);
    await db.put('a', '1');
    await db.close();
    expect(await runCli(['put', copyDir, 'b', 'two'])).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await runCli(['put', '--hex', copyDir, hex(Buffer.from('c')), 'ff00'])).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await runCli(['del', copyDir, 'a'])).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await runCli(['del', copyDir, 'never-there'])).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await runCli(['scan', copyDir])).stdout).toBe('"b" => "two"\n"c" => 0xff00\n');
    expect((await runCli(['get', copyDir, 'a'])).code).toBe(1);
    expect((await runCli(['put', copyDir, 'k'])).code).toBe(2);
    expect((await runCli(['put', '--hex', copyDir, 'zz', '00'])).code).toBe(2);
    const reopened = await DB.open(copyDir, { createIfMissing: false });
    expect(reopened.getSync('b')?.toString()).toBe('two');
    await reopened.close();
  });

  it('checkpoint copies the database into a new directory (tables hard-linked); text and --json', async () => {
    const target = join(root, 'backup');
    const r = await runCli(['checkpoint', dir, target]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(new RegExp(`^checkpoint in ${target}: last sequence \\d+, CURRENT names MANIFEST-\\d+\\ntables: [1-9]\\d* hard-linked, 0 copied \\(`));
    const s = await runCli(['scan', '--json', target]);
    expect(jsonLines(s.stdout).map((l) => [l.key, l.value])).toEqual(sortedModel());
    const again = await runCli(['checkpoint', dir, target]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^sievekv: INVALID_ARGUMENT: .+ already exists and is not empty[^\n]*\n$/);
    const j = jsonLines((await runCli(['checkpoint', '--json', dir, join(root, 'backup2')])).stdout);
    expect(j).toHaveLength(1);
    expect(j[0]).toMatchObject({ kind: 'checkpoint', dir: join(root, 'backup2'), tables: { copied: 0 } });
    expect((await runCli(['checkpoint', dir])).code).toBe(2);
  });
});

describe('progress of long work (when asked for)', () => {
  it('scan, checkpoint and repair report on stderr; stdout is the same as without; scan to a terminal shows none', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/p', { fs, writeBufferSize: 32 * 1024, compression: 'none' });
    for (let i = 0; i < 5000; i++) db.putSync(`k${String(i).padStart(5, '0')}`, 'v'.repeat(40));
    await db.close();
    const lines = { progress: 'lines' as const, progressTiming: { delayMs: 0, lineEveryMs: 0 } };
    const quietScan = await runCli(['scan', '/p'], fs);
    const scan = await runCli(['scan', '/p'], fs, lines);
    expect(scan.stdout).toBe(quietScan.stdout);
    expect(scan.stderr.trimEnd().split('\n')).toEqual([
      'sievekv: scan: at (1,024 entries, 46.0 KiB of keys and values)',
      'sievekv: scan: at (2,048 entries, 92.0 KiB of keys and values)',
      'sievekv: scan: at (3,072 entries, 138.0 KiB of keys and values)',
      'sievekv: scan: at (4,096 entries, 184.0 KiB of keys and values)',
      'sievekv: scan: done (5,000 entries, 224.6 KiB of keys and values)',
    ]);
    expect((await runCli(['scan', '/p'], fs, { ...lines, stdoutIsTTY: true })).stderr).toBe('');
    const checkpoint = await runCli(['checkpoint', '/p', '/q'], fs, lines);
    expect(checkpoint.code).toBe(0);
    const steps = checkpoint.stderr.trimEnd().split('\n');
    expect(steps[0]).toMatch(/^sievekv: checkpoint: \d+% \(.+ of .+, \d+\/\d+ files\)$/);
    expect(steps.at(-1)).toMatch(/^sievekv: checkpoint: done \(.+, (\d+)\/\1 files\)$/);
    const repair = await runCli(['repair', '/q'], fs, lines);
    expect(repair.code).toBe(0);
    expect(repair.stderr).toMatch(/^sievekv: repair: \d+% \(.+ read\)\n(.+\n)*sievekv: repair: done \(.+\)\n$/);
    expect((await runCli(['scan', '/q'], fs)).stdout).toBe(quietScan.stdout);
  });
});

describe('usage', () => {
  it('help, --help and -h print the usage on stdout, exit 0; it lists every command', async () => {
    for (const argv of [['help'], ['--help'], ['-h']]) {
      expect(await runCli(argv)).toEqual({ code: 0, stdout: USAGE, stderr: '' });
    }
    for (const c of ['get', 'scan', 'stats', 'verify', 'put', 'del', 'compact', 'checkpoint', 'repair', 'dump']) {
      expect(USAGE).toMatch(new RegExp(`^  ${c} `, 'm'));
    }
  });

  it("'help COMMAND' and 'COMMAND --help' print that command's usage and options", async () => {
    const h = await runCli(['help', 'scan']);
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/^Usage: sievekv scan DIR \[--gte K\] \[--gt K\] \[--lt K\] \[--lte K\] \[--limit N\] \[--reverse\] \[--json\] \[--hex\]\n/);
    expect(h.stdout).toMatch(/^Options:\n {2}--gte K +from K on/m);
    expect(h.stdout).toContain('read-only');
    expect(await runCli(['scan', '--help'])).toEqual(h);
    expect(await runCli(['dump', '-h'])).toEqual(await runCli(['help', 'dump']));
    expect((await runCli(['help', 'put'])).stdout).toContain('LOCKED');
    const unknown = await runCli(['help', 'frob']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.split('\n')[0]).toBe('sievekv: no command "frob": the commands are get, scan, stats, verify, put, del, compact, checkpoint, repair, dump');
  });

  it('--version prints the version in package.json', async () => {
    const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
    expect(await runCli(['--version'])).toEqual({ code: 0, stdout: `sievekv ${version}\n`, stderr: '' });
    expect((await runCli(['-V'])).stdout).toBe(`sievekv ${version}\n`);
  });

  it('no command, an unknown command, an unknown option: stderr, exit 2', async () => {
    expect(await runCli([])).toEqual({ code: 2, stdout: '', stderr: USAGE });
    expect(await runCli(['frobnicate'])).toEqual({ code: 2, stdout: '', stderr: `sievekv: unknown command "frobnicate"\n${USAGE}` });
    const opt = await runCli(['dump', '--frob', 'x.ldb']);
    expect(opt.code).toBe(2);
    expect(opt.stderr).toBe("sievekv: Unknown option '--frob'.\nRun 'sievekv help dump' for usage.\n");
    expect((await runCli(['dump'])).code).toBe(2);
    expect((await runCli(['dump', '--kind', 'sst', 'x'])).code).toBe(2);
    expect((await runCli(['get', dir])).stderr).toBe("sievekv: get takes DIR KEY, got 1 argument\nRun 'sievekv help get' for usage.\n");
  });
});

describe('the bin', () => {
  const bin = join(import.meta.dirname, '..', '..', 'bin', 'sievekv.ts');

  it('runs as a child process: a missing file is exit 1 and exactly one stderr line', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', bin, 'dump', 'missing/000123.ldb'], { encoding: 'utf8', timeout: 120_000 });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('sievekv: IO_ERROR: cannot open missing/000123.ldb: no such file\n');
  });

  it('shows progress lines on a piped stderr when the work is long enough, and none with SIEVEKV_PROGRESS=none', () => {
    // SIEVEKV_PROGRESS=lines with no delay stands in for a long run on a pipe.
    const env = { ...process.env, SIEVEKV_PROGRESS_DELAY_MS: '0' };
    const piped = spawnSync(process.execPath, ['--import', 'tsx', bin, 'verify', dir], { encoding: 'utf8', timeout: 120_000, env });
    expect(piped.status).toBe(0);
    expect(piped.stdout).toMatch(/OK: no damage found\n$/);
    expect(piped.stderr).toMatch(/^(sievekv: verify: \d+% \(.+\)\n)+sievekv: verify: done \(.+\)\n$/);
    const none = spawnSync(process.execPath, ['--import', 'tsx', bin, 'verify', dir], { encoding: 'utf8', timeout: 120_000, env: { ...env, SIEVEKV_PROGRESS: 'none' } });
    expect(none.status).toBe(0);
    expect(none.stderr).toBe('');
  }, 300_000); // two cold CLI starts of up to 120 s each
});
