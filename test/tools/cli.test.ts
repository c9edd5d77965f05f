/**
 * The CLI's database commands (get, scan, stats, compact) on a small database made with `DB` in
 * a temporary directory, its usage handling (help, unknown commands and options: exit 2), and
 * one run of the bin itself as a child process (exit code and the one stderr line).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
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
  it('stats prints sievekv.stats, the levels and estimate-num-keys; --json has them as fields', async () => {
    const r = await runCli(['stats', dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^sievekv\.stats:\n\{/);
    expect(r.stdout).toMatch(/^levels:\n/m);
    expect(r.stdout).toMatch(/^estimate-num-keys: \d+$/m);
    const j = jsonLines((await runCli(['stats', '--json', dir])).stdout)[0] as unknown as {
      stats: { levels: { level: number; files: number; bytes: number }[] };
      levels: { level: number; files: number; bytes: number }[];
      estimateNumKeys: number;
    };
    expect(j.levels.map((l) => l.level)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    for (const l of j.stats.levels) expect(j.levels[l.level]).toEqual({ level: l.level, files: l.files, bytes: l.bytes });
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

  it('a missing directory, a directory without a database, a locked database: one line, exit 1', async () => {
    const missing = join(root, 'nope');
    expect(await runCli(['stats', missing])).toEqual({ code: 1, stdout: '', stderr: `sievekv: cannot open ${missing}: no such directory\n` });
    expect(await runCli(['get', root, 'k'])).toEqual({ code: 1, stdout: '', stderr: `sievekv: ${root} holds no database (no CURRENT file)\n` });
    const db = await DB.open(dir, { createIfMissing: false });
    try {
      const r = await runCli(['scan', dir]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`^sievekv: ${dir}: locked: .+\\n$`));
    } finally {
      await db.close();
    }
  });
});

describe('usage', () => {
  it('help, --help and -h print the usage on stdout, exit 0', async () => {
    for (const argv of [['help'], ['--help'], ['-h'], ['dump', '--help']]) {
      expect(await runCli(argv)).toEqual({ code: 0, stdout: USAGE, stderr: '' });
    }
  });

  it('no command, an unknown command, an unknown option: stderr, exit 2', async () => {
    expect(await runCli([])).toEqual({ code: 2, stdout: '', stderr: USAGE });
    expect(await runCli(['frobnicate'])).toEqual({ code: 2, stdout: '', stderr: `sievekv: unknown command "frobnicate"\n${USAGE}` });
    const opt = await runCli(['dump', '--frob', 'x.ldb']);
    expect(opt.code).toBe(2);
    expect(opt.stderr).toBe("sievekv: Unknown option '--frob'.\nRun 'sievekv help' for usage.\n");
    expect((await runCli(['dump'])).code).toBe(2);
    expect((await runCli(['dump', '--kind', 'sst', 'x'])).code).toBe(2);
  });
});

describe('the bin', () => {
  it('runs as a child process: a missing file is exit 1 and exactly one stderr line', () => {
    const bin = join(import.meta.dirname, '..', '..', 'bin', 'sievekv.ts');
    const r = spawnSync(process.execPath, ['--import', 'tsx', bin, 'dump', 'missing/000123.ldb'], { encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('sievekv: cannot open missing/000123.ldb: no such file\n');
  });
});
