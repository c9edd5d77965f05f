/**
 * The `snappy` addon is loaded at the first snappy block, not when sievekv is imported: a process
 * that writes and reads lz4 tables never holds it (~8 MB of RSS). Checked in a child process, whose
 * module cache no other test has touched: it writes, flushes and reads back a database of its own,
 * then reports whether snappy is loaded, then opens a copy of the LevelDB-made snappy fixture and
 * reports again.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const DB_MODULE = fileURLToPath(new URL('../../src/db.ts', import.meta.url));
const SNAPPY_FIXTURE = fileURLToPath(new URL('../fixtures/ldb-snappy-small', import.meta.url));

const CHILD = `
import { createRequire } from 'node:module';
const { DB } = await import(process.env.DB_MODULE);
const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => /[\\\\/]snappy[\\\\/]/.test(k));
const own = await DB.open(process.env.OWN_DIR);
for (let i = 0; i < 2000; i++) own.putSync('key' + String(i).padStart(6, '0'), 'value '.repeat(20) + i);
await own.compactRange();
const read = own.getSync('key001234')?.toString();
await own.close();
const afterLz4 = loaded();
const leveldb = await DB.open(process.env.SNAPPY_DIR);
let entries = 0;
for (const _ of leveldb.iterator()) entries++;
await leveldb.close();
console.log(JSON.stringify({ read, afterLz4, afterSnappy: loaded(), entries }));
`;

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('the snappy addon', () => {
  it('is loaded only once a snappy block is read', () => {
    dir = mkdtempSync(join(tmpdir(), 'sievekv-snappy-lazy-'));
    const snappyDir = join(dir, 'leveldb');
    cpSync(SNAPPY_FIXTURE, snappyDir, { recursive: true });
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], {
      env: { ...process.env, DB_MODULE, OWN_DIR: join(dir, 'own'), SNAPPY_DIR: snappyDir },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.stderr).toBe('');
    const report = JSON.parse(child.stdout.trim().split('\n').pop()!) as { read: string; afterLz4: boolean; afterSnappy: boolean; entries: number };
    expect(report.read).toBe('value '.repeat(20) + 1234);
    expect(report.afterLz4).toBe(false);
    expect(report.afterSnappy).toBe(true);
    expect(report.entries).toBeGreaterThan(0);
  });
});
