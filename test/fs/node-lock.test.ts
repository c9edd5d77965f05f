/**
 * The directory lock (src/fs/node-lock.ts): across processes a live holder blocks and a SIGKILLed
 * one does not; inside one process it holds whatever path or thread the second open comes from;
 * and the lock file's content decides, never its mere presence or a path string. A directory
 * LevelDB holds (its fcntl lock, as Linux lists it) is LOCKED too.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId, Worker } from 'node:worker_threads';
import { ClassicLevel } from 'classic-level';
import { afterEach, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { isSieveError, type SieveError } from '../../src/errors.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import { fcntlLockHolder } from '../../src/fs/node-lock.js';
import { closedAsMarked } from '../../src/db/close-mark.js';

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

function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sievekv-lock-'));
  dirs.push(dir);
  return dir;
}

function lockError(take: () => unknown): SieveError {
  try {
    take();
  } catch (err) {
    if (isSieveError(err)) return err;
    throw err;
  }
  throw new Error('expected LOCKED, but the lock was taken');
}

type WorkerReply = { opened: true } | { opened: false; code: string; message: string };

/** Opens the database in `dir` from a worker thread of this process; `close` closes it there. */
async function openInWorker(dir: string): Promise<{ reply: WorkerReply; close(): Promise<void> }> {
  // As src/compaction/runner.ts: Node 20 applies no --import hooks to worker threads.
  const entry = JSON.stringify(new URL('../support/lock-holder-worker.ts', import.meta.url).href);
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${entry}); })`;
  const worker = new Worker(bootstrap, { eval: true, workerData: { dir } });
  const next = (): Promise<unknown> =>
    new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  const reply = (await next()) as WorkerReply;
  return {
    reply,
    async close() {
      if (reply.opened) {
        worker.postMessage('close');
        await next();
      }
      await worker.terminate();
    },
  };
}

/** The lock file this process writes for `lockPath`, taken and released again. */
function ownLockLine(lockPath: string): string {
  const lock = new NodeFileSystem().lock(lockPath);
  const line = readFileSync(`${lockPath}.pid`, 'utf8');
  lock.release();
  return line;
}

describe('NodeFileSystem.lock inside one process', () => {
  it('a second lock through a symbolic link to the directory is LOCKED', () => {
    const dir = newDir();
    const link = `${dir}-link`;
    symlinkSync(dir, link);
    dirs.push(link);
    const fs = new NodeFileSystem();
    const lock = fs.lock(join(dir, 'LOCK'));
    const err = lockError(() => fs.lock(join(link, 'LOCK')));
    expect(err.code).toBe('LOCKED');
    expect(err.message).toContain(`pid ${process.pid}`);
    expect(err.message).toContain('this thread');
    lock.release();
    fs.lock(join(link, 'LOCK')).release(); // released: free through either path
  });

  it('a worker thread cannot open a database the main thread holds, nor the reverse', { timeout: 60_000 }, async () => {
    const dir = newDir();
    const db = await DB.open(dir);
    await db.put('main', '1');
    const refused = await openInWorker(dir);
    expect(refused.reply).toMatchObject({ opened: false, code: 'LOCKED' });
    const mainThread = `another thread of this process (pid ${process.pid}, thread ${threadId})`;
    expect(refused.reply.opened === false && refused.reply.message).toContain(mainThread);
    await refused.close();
    expect(db.getSync('main')?.toString()).toBe('1');
    await db.close();

    const holder = await openInWorker(dir);
    expect(holder.reply).toEqual({ opened: true });
    let caught: unknown;
    try {
      await DB.open(dir);
    } catch (err) {
      caught = err;
    }
    expect(isSieveError(caught, 'LOCKED')).toBe(true);
    expect(String(caught)).toMatch(/another thread of this process \(pid \d+, thread [1-9]\d*\)/);
    await holder.close();
    const again = await DB.open(dir); // the worker released it
    expect(again.getSync('main')?.toString()).toBe('1');
    await again.close();
  });

  it("a lock file naming this process is held (another thread's, or a handle never closed)", () => {
    const dir = newDir();
    const lockPath = join(dir, 'LOCK');
    const fs = new NodeFileSystem();
    const [pid, start, , token] = ownLockLine(lockPath).trim().split(' ');
    writeFileSync(`${lockPath}.pid`, `${pid} ${start} 7 ${token}x\n`);
    const err = lockError(() => fs.lock(lockPath));
    expect(err.code).toBe('LOCKED');
    expect(err.message).toContain(`another thread of this process (pid ${process.pid}, thread 7)`);
    // An older sievekv's lock file holds the pid alone: this process's pid is still held.
    writeFileSync(`${lockPath}.pid`, `${process.pid}\n`);
    expect(lockError(() => fs.lock(lockPath)).code).toBe('LOCKED');
    expect(readFileSync(`${lockPath}.pid`, 'utf8')).toBe(`${process.pid}\n`); // untouched
  });

  it('a lock file naming our pid but another process start is stale (a pid reused after a crash)', () => {
    const dir = newDir();
    const lockPath = join(dir, 'LOCK');
    const [pid, start, thread, token] = ownLockLine(lockPath).trim().split(' ');
    const earlier = start!.startsWith('L:') ? 'L:00000000-0000-0000-0000-000000000000:1' : 'T:0';
    writeFileSync(`${lockPath}.pid`, `${pid} ${earlier} ${thread} ${token}x\n`);
    new NodeFileSystem().lock(lockPath).release();
  });

  it('a lock file naming a dead process is taken over, and its replacement names us', () => {
    const dir = newDir();
    const lockPath = join(dir, 'LOCK');
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    writeFileSync(`${lockPath}.pid`, `${dead}\n`);
    const lock = new NodeFileSystem().lock(lockPath);
    expect(readFileSync(`${lockPath}.pid`, 'utf8').split(' ')[0]).toBe(String(process.pid));
    lock.release();
    expect(readdirSync(dir).sort()).toEqual(['LOCK']); // no lock file, no temporary left behind
  });

  it('an empty lock file is held while young (its writer may be mid-write) and stale when old', () => {
    const dir = newDir();
    const lockPath = join(dir, 'LOCK');
    const fs = new NodeFileSystem();
    writeFileSync(`${lockPath}.pid`, '');
    const err = lockError(() => fs.lock(lockPath));
    expect(err.code).toBe('LOCKED');
    expect(err.message).toContain('still writing the lock file');
    const minuteAgo = new Date(Date.now() - 60_000);
    utimesSync(`${lockPath}.pid`, minuteAgo, minuteAgo);
    fs.lock(lockPath).release();
  });

  it('release removes only its own lock file, and a released lock can be taken again', () => {
    const dir = newDir();
    const lockPath = join(dir, 'LOCK');
    const fs = new NodeFileSystem();
    const first = fs.lock(lockPath);
    first.release();
    const second = fs.lock(lockPath);
    first.release(); // idempotent: must not remove the second holder's lock file
    expect(lockError(() => fs.lock(lockPath)).code).toBe('LOCKED');
    second.release();
    fs.lock(lockPath).release();
  });
});

describe("LevelDB's fcntl lock (Linux's /proc/locks)", () => {
  it.skipIf(!existsSync('/proc/locks'))('a directory LevelDB (classic-level) holds open is LOCKED, naming the process; LevelDB keeps its lock', async () => {
    const dir = newDir();
    const ldb = new ClassicLevel(dir);
    await ldb.open();
    try {
      const err = await DB.open(dir).then(
        (db) => db.close().then(() => null),
        (e: unknown) => e as SieveError,
      );
      expect(isSieveError(err) && err.code).toBe('LOCKED');
      expect(err!.message).toContain(`process ${process.pid}`);
      // Nothing of sievekv's is left, and LevelDB's lock was not dropped by the attempt.
      expect(existsSync(join(dir, 'LOCK.pid'))).toBe(false);
      expect(fcntlLockHolder(join(dir, 'LOCK'))).toContain(`process ${process.pid}`);
      await ldb.put('k', 'v');
    } finally {
      await ldb.close();
    }
    expect(fcntlLockHolder(join(dir, 'LOCK'))).toBeUndefined();
    const db = await DB.open(dir);
    expect(db.getSync('k')?.toString()).toBe('v');
    await db.close();
  });

  it.skipIf(!existsSync('/proc/locks'))('a directory sievekv closed cleanly is LOCKED once LevelDB opened it (its open ends the close mark)', async () => {
    const dir = newDir();
    const db = await DB.open(dir);
    await db.put('a', '1');
    await db.close();
    expect(closedAsMarked(new NodeFileSystem(), dir)).toBe(true);
    const ldb = new ClassicLevel(dir);
    await ldb.open();
    try {
      expect(closedAsMarked(new NodeFileSystem(), dir)).toBe(false);
      const err = await DB.open(dir).then(
        (d) => d.close().then(() => null),
        (e: unknown) => e as SieveError,
      );
      expect(isSieveError(err) && err.code).toBe('LOCKED');
      expect(await ldb.get('a')).toBe('1');
    } finally {
      await ldb.close();
    }
  });

  it.skipIf(!existsSync('/proc/locks') || !existsSync('/usr/bin/flock'))(
    'after a clean close, a lock taken without touching the directory is not looked for; once LOG changes, it is',
    async () => {
      const dir = newDir();
      await (await DB.open(dir)).close();
      // flock(1) holds a kernel lock on LOCK and writes nothing (the close mark's documented limit).
      // Its own group, so that the kill ends the sleep too (it inherits the locked descriptor).
      const holder = spawn('/usr/bin/flock', [join(dir, 'LOCK'), 'sleep', '60'], { stdio: 'ignore', detached: true });
      try {
        for (let i = 0; i < 200 && fcntlLockHolder(join(dir, 'LOCK')) === undefined; i++) await new Promise((r) => setTimeout(r, 25));
        expect(fcntlLockHolder(join(dir, 'LOCK'))).toContain('FLOCK lock');
        await (await DB.open(dir)).close(); // the mark held: no look at /proc/locks
        writeFileSync(join(dir, 'LOG'), 'another program\'s log\n', { flag: 'a' });
        const err = await DB.open(dir).then(
          (d) => d.close().then(() => null),
          (e: unknown) => e as SieveError,
        );
        expect(isSieveError(err) && err.code).toBe('LOCKED');
      } finally {
        process.kill(-holder.pid!, 'SIGKILL');
      }
    },
  );

  it.skipIf(!existsSync('/proc/locks'))('skipForeignCheck is asked only once the pid lock is ours, and only if LOCK exists', () => {
    const dir = newDir();
    const path = join(dir, 'LOCK');
    const asked: boolean[] = [];
    const skip = (): boolean => {
      asked.push(existsSync(`${path}.pid`));
      return true;
    };
    new NodeFileSystem().lock(path, { skipForeignCheck: skip }).release(); // no LOCK yet: nothing to look at
    expect(asked).toEqual([]);
    new NodeFileSystem().lock(path, { skipForeignCheck: skip }).release(); // the first lock created LOCK
    expect(asked).toEqual([true]);
  });

  it('reads /proc/locks lines by device and inode: holders count, waiters and other files do not', () => {
    const dir = newDir();
    const path = join(dir, 'LOCK');
    writeFileSync(path, '');
    const stat = statSync(path, { bigint: true });
    const major = ((stat.dev >> 8n) & 0xfffn) | ((stat.dev >> 32n) & ~0xfffn);
    const minor = (stat.dev & 0xffn) | ((stat.dev >> 12n) & ~0xffn);
    const id = `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}:${stat.ino}`;
    const other = `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}:${stat.ino + 1n}`;
    expect(fcntlLockHolder(path, `1: POSIX  ADVISORY  WRITE 4224 ${id} 0 EOF\n`)).toBe('process 4224 (its POSIX lock on LOCK, as LevelDB and RocksDB take)');
    expect(fcntlLockHolder(path, `1: OFDLCK ADVISORY  WRITE -1 ${other} 0 EOF\n2: FLOCK  ADVISORY  WRITE 77 ${id} 0 EOF\n`)).toContain('process 77 (its FLOCK lock');
    expect(fcntlLockHolder(path, `1: OFDLCK ADVISORY  WRITE -1 ${id} 0 EOF\n`)).toBe('an open file description lock on LOCK (the kernel names no process)');
    expect(fcntlLockHolder(path, `1: POSIX  ADVISORY  WRITE 4224 ${other} 0 EOF\n1: -> POSIX  ADVISORY  WRITE 99 ${id} 0 EOF\n`)).toBeUndefined();
    expect(fcntlLockHolder(path, '')).toBeUndefined();
    expect(fcntlLockHolder(join(dir, 'missing'), `1: POSIX  ADVISORY  WRITE 4224 ${id} 0 EOF\n`)).toBeUndefined();
  });
});
