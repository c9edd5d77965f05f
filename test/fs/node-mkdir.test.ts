/**
 * FileSystem.mkdir (issue 9, item 10): a directory that cannot be created fails at once with a
 * clear IO_ERROR, a path through a file says "not a directory", and missing parents are made.
 * Node's `mkdirSync(…, { recursive: true })` loops forever on `/proc/1/x`, so that case runs in a
 * child process that is killed if it hangs (a synchronous hang would stop any in-process timer).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { isSieveError } from '../../src/errors.js';
import type { FileSystem } from '../../src/fs/file-system.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';

const root = mkdtempSync(join(tmpdir(), 'sievekv-mkdir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function mkdirError(fs: FileSystem, dir: string): unknown {
  try {
    fs.mkdir(dir);
  } catch (err) {
    return err;
  }
  throw new Error(`mkdir(${dir}) succeeded`);
}

const implementations: [string, () => { fs: FileSystem; dir: string }][] = [
  ['NodeFileSystem', () => ({ fs: new NodeFileSystem(), dir: mkdtempSync(join(root, 'case-')) })],
  [
    'MemFileSystem',
    () => {
      const fs = new MemFileSystem();
      fs.mkdir('/db');
      return { fs, dir: '/db' };
    },
  ],
];

describe.each(implementations)('%s.mkdir', (_name, make) => {
  it('creates a nested new path, parents first, and accepts one that exists', () => {
    const { fs, dir } = make();
    const nested = join(dir, 'a', 'b', 'c');
    fs.mkdir(nested);
    expect(fs.exists(nested)).toBe(true);
    expect(fs.list(join(dir, 'a'))).toEqual(['b']);
    fs.mkdir(nested);
    fs.mkdir(dir);
  });

  it('a path that is a file, or lies under one, is IO_ERROR "not a directory" (not EEXIST)', () => {
    const { fs, dir } = make();
    const file = join(dir, 'plain');
    const w = fs.createWritable(file);
    w.close();
    for (const path of [file, join(file, 'x'), join(file, 'x', 'y')]) {
      const err = mkdirError(fs, path);
      expect(isSieveError(err, 'IO_ERROR')).toBe(true);
      expect(String(err)).toContain(`${file} is not a directory`);
      expect(String(err)).not.toContain('EEXIST');
      expect((err as Error & { cause: { code: string } }).cause.code).toBe('ENOTDIR');
    }
    expect(fs.exists(join(file, 'x'))).toBe(false);
  });
});

describe('DB.open where no directory can be made', () => {
  it.runIf(process.platform === 'linux' && existsSync('/proc/1'))(
    "DB.open('/proc/1/x') fails at once with IO_ERROR instead of hanging",
    { timeout: 60_000 },
    () => {
      const db = new URL('../../src/db.ts', import.meta.url).pathname;
      const script = `
        const { DB } = await import(${JSON.stringify(db)});
        try {
          await DB.open('/proc/1/x');
          console.log('opened');
        } catch (err) {
          console.log(JSON.stringify({ code: err.code, message: err.message, cause: err.cause?.code }));
        }
      `;
      const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        encoding: 'utf8',
        timeout: 30_000,
        killSignal: 'SIGKILL',
      });
      expect(child.signal, 'DB.open hung and was killed').toBeNull();
      expect(child.stderr).toBe('');
      const outcome = JSON.parse(child.stdout.trim()) as { code: string; message: string; cause: string };
      expect(outcome.code).toBe('IO_ERROR');
      expect(outcome.message).toContain('/proc/1/x');
      expect(outcome.cause).toMatch(/^E[A-Z]+$/);
    },
  );

  it('DB.open on a regular file says "not a directory"', async () => {
    const file = join(root, 'a-file');
    writeFileSync(file, 'not a database');
    let caught: unknown;
    try {
      await DB.open(file);
    } catch (err) {
      caught = err;
    }
    expect(isSieveError(caught, 'IO_ERROR')).toBe(true);
    expect(String(caught)).toContain('not a directory');
    expect(statSync(file).size).toBe('not a database'.length); // untouched
  });
});
