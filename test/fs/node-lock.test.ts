/**
 * The directory lock across processes: a live holder blocks, a SIGKILLed holder does not.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function holdLockInChild(lockPath: string): Promise<ReturnType<typeof spawn>> {
  const nodeFs = new URL('../../src/fs/node-fs.ts', import.meta.url).pathname;
  const script = `
    const { NodeFileSystem } = await import(${JSON.stringify(nodeFs)});
    new NodeFileSystem().lock(${JSON.stringify(lockPath)});
    process.stdout.write('locked\\n');
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`child exited early with ${code}`)));
  });
}

describe('NodeFileSystem.lock across processes', () => {
  it('reports LOCKED while another process holds the lock, and takes over after it is killed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sievekv-lock-'));
    dirs.push(dir);
    const lockPath = join(dir, 'LOCK');
    const child = await holdLockInChild(lockPath);
    const fs = new NodeFileSystem();
    let caught: unknown;
    try {
      fs.lock(lockPath);
    } catch (err) {
      caught = err;
    }
    expect(isSieveError(caught, 'LOCKED')).toBe(true);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const lock = fs.lock(lockPath); // the dead holder's lock is stale
    lock.release();
  });
});
