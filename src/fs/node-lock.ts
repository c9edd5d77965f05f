/**
 * The directory lock behind NodeFileSystem.lock: at most one open database per directory, across
 * processes and across the threads of one process, whatever path (a symbolic link, `..`, a bind
 * mount) reached the directory. Callers: NodeFileSystem only, from any thread.
 *
 * The lock file. Node has no fcntl/flock, so the lock is a file: `<path>.pid` beside LevelDB's
 * `LOCK` (created empty, for LevelDB's sake). It exists exactly while a database holds the lock
 * and holds one line, `<pid> <process start> <threadId> <token>` (older sievekv wrote `<pid>`
 * alone; both read the pid first). It is made whole or not at all: the line goes to a private
 * temporary file that is then hard-linked to the lock name, and link(2) fails with EEXIST when the
 * name exists — so of any number of racing openers exactly one wins, and nobody reads a
 * half-written lock. (A file system that refuses hard links gets O_EXCL create, then write.)
 *
 * The file is the registry. Worker threads share no JS state, so an in-memory table of open
 * databases cannot see another thread's open, and a table keyed by a path string misses the same
 * directory reached by another path. The file is shared by every thread and process, and the
 * operating system resolves every path to it. Reading a lock file that is there:
 * - our pid and our process start: held by this process — this thread or another, through this
 *   path or another, by an open handle or one never closed. LOCKED. It cannot be a crash's
 *   leftover: a crash would have ended this process.
 * - our pid, another process start: an earlier process that had our pid died without releasing
 *   it (a container's pid 1 after a restart, or a reboot). Stale.
 * - another pid, alive (kill(pid, 0) succeeds or says EPERM): LOCKED — unless its start, read
 *   from /proc, differs from the recorded one (the pid was reused after a crash): stale.
 * - another pid, dead: stale.
 * - empty or unparseable: an opener using O_EXCL (an older sievekv, or the fallback above) may be
 *   between its create and its write, so LOCKED while younger than HALF_WRITTEN_GRACE_MS; stale
 *   after.
 * A process's start is `L:<boot id>:<start ticks>` from /proc on Linux (exact), elsewhere
 * `T:<wall-clock ms>` derived from process.uptime(), the same in every thread, compared within
 * START_TOLERANCE_MS.
 *
 * Taking over a stale lock. The stale file is renamed aside (atomic: one racer gets it, the others
 * see ENOENT and look again) and compared with the file that was judged; if a racer had already
 * replaced it with a live lock, that lock is linked back and the judging starts over. Release
 * removes the lock file only if it still holds this lock's token.
 *
 * LevelDB's and RocksDB's lock. They hold an fcntl lock on `LOCK`, which Node cannot take or
 * test; on Linux the kernel lists it in /proc/locks, by the file's device and inode. Once the
 * lock file is ours, a lock listed there on `LOCK` (compared as `stat` gives them, before this
 * process opens `LOCK`: closing any descriptor of a file drops the process's own fcntl locks on
 * it) makes the open LOCKED, naming the process. Reading /proc/locks waits out an RCU grace
 * period in the kernel (5-15 ms), so it is not read when `LOCK` does not exist yet, nor when the
 * caller's `skipForeignCheck` says the directory is as sievekv's last close left it
 * (db/close-mark.ts: which holders that still sees, and which it misses).
 *
 * Limits. A pid means nothing in another pid namespace or on another machine: do not share one
 * database directory between containers or over a network file system. The fcntl check is one
 * way and Linux only: LevelDB opening a directory sievekv holds does not see sievekv's lock, and
 * where /proc/locks is missing or names another device than `stat` (btrfs, some overlay file
 * systems), LevelDB's lock is not seen either: do not open one directory with LevelDB and sievekv
 * at once. Three openers racing on one stale lock can, in the instant between a mistaken
 * take-over and the link back, let the third in beside the live holder.
 */
import process from 'node:process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import { threadId } from 'node:worker_threads';
import { ErrorCode, ioError, SieveError } from '../errors.js';
import type { FileLock, LockOptions } from './file-system.js';

/** How long an empty or unparseable lock file is taken for one being written by a live opener. */
const HALF_WRITTEN_GRACE_MS = 5_000;
/** How far two readings of one process's start (`T:` form) may differ: clock reads and rounding. */
const START_TOLERANCE_MS = 2_000;
/** Rounds of create / judge / take over before giving up; a round is lost only to a racing opener. */
const MAX_ROUNDS = 5;

/** A lock file as read: its text and which file it was, to tell it from a replacement. */
interface LockFileSnapshot {
  text: string;
  ino: bigint;
  mtimeMs: number;
}

/** The lock file's line, parsed; `start`, `thread` and `token` are absent in an older sievekv's. */
interface Holder {
  pid: number;
  start?: string;
  thread?: number;
  token?: string;
}

type Verdict = { held: true; who: string } | { held: false };

function wrap(op: string, path: string, err: unknown): SieveError {
  const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
  return ioError(`${op} failed: ${code}`, { file: path, cause: err });
}

function errnoOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

function readOrUndefined(path: string): string | undefined {
  try {
    return fs.readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

const bootId = readOrUndefined('/proc/sys/kernel/random/boot_id')?.trim();
/** Linux lists kernel file locks there; elsewhere another program's lock cannot be seen. */
const HAS_PROC_LOCKS = fs.existsSync('/proc/locks');

/** The start of process `pid` as `L:<boot id>:<ticks>`, if /proc tells it (Linux). */
function linuxStartOf(pid: number | 'self'): string | undefined {
  if (bootId === undefined) return undefined;
  const stat = readOrUndefined(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // Fields after the command name, which is in parentheses and may hold spaces or ')':
  // state is field 3, starttime field 22.
  const ticks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  return ticks !== undefined && /^\d+$/.test(ticks) ? `L:${bootId}:${ticks}` : undefined;
}

const ownStart = linuxStartOf('self') ?? `T:${Math.round(Date.now() - process.uptime() * 1000)}`;

/** Whether two recorded starts name one process; undefined when their forms cannot be compared. */
function sameStart(a: string, b: string): boolean | undefined {
  if (a.startsWith('L:') && b.startsWith('L:')) return a === b;
  if (a.startsWith('T:') && b.startsWith('T:')) {
    const diff = Math.abs(Number(a.slice(2)) - Number(b.slice(2)));
    return Number.isFinite(diff) ? diff < START_TOLERANCE_MS : undefined;
  }
  return undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoOf(err) === 'EPERM';
  }
}

function parseHolder(text: string): Holder | undefined {
  const [pidText, start, thread, token] = text.trim().split(/\s+/);
  if (pidText === undefined || !/^\d+$/.test(pidText)) return undefined;
  const pid = Number(pidText);
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  if (start === undefined || thread === undefined || token === undefined || !/^\d+$/.test(thread)) return { pid };
  return { pid, start, thread: Number(thread), token };
}

function describeHolder(holder: Holder): string {
  return holder.thread === undefined ? `process ${holder.pid}` : `process ${holder.pid} (thread ${holder.thread})`;
}

function judge(found: LockFileSnapshot, now: number): Verdict {
  const holder = parseHolder(found.text);
  if (holder === undefined) {
    const age = now - found.mtimeMs;
    if (Math.abs(age) < HALF_WRITTEN_GRACE_MS) {
      return { held: true, who: `an opener still writing the lock file (it is empty or unreadable, ${Math.round(age)} ms old)` };
    }
    return { held: false };
  }
  if (holder.pid === process.pid) {
    if (holder.start !== undefined && sameStart(holder.start, ownStart) === false) return { held: false };
    if (holder.thread === undefined) {
      const who = `this process (pid ${holder.pid}, in an older sievekv's lock file: if nothing here holds it, remove that file)`;
      return { held: true, who };
    }
    const thread = `pid ${holder.pid}, thread ${holder.thread}`;
    return { held: true, who: holder.thread === threadId ? `this thread (${thread})` : `another thread of this process (${thread})` };
  }
  if (!isAlive(holder.pid)) return { held: false };
  if (holder.start !== undefined) {
    const current = linuxStartOf(holder.pid);
    if (current !== undefined && sameStart(holder.start, current) === false) return { held: false }; // pid reused
  }
  return { held: true, who: describeHolder(holder) };
}

/** Reads the lock file, or undefined if there is none (it vanished: look again). */
function readLockFile(path: string): LockFileSnapshot | undefined {
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw wrap('lock', path, err);
  }
  try {
    const stat = fs.fstatSync(fd, { bigint: true });
    return { text: fs.readFileSync(fd, 'utf8'), ino: stat.ino, mtimeMs: Number(stat.mtimeMs) };
  } catch (err) {
    throw wrap('lock', path, err);
  } finally {
    fs.closeSync(fd);
  }
}

/** Creates the lock file holding `line`, whole, unless it exists: true if this call created it. */
function createExclusive(pidPath: string, line: string, token: string): boolean {
  const temp = `${pidPath}.${token}.tmp`;
  try {
    fs.writeFileSync(temp, line, { flag: 'wx' });
  } catch (err) {
    throw wrap('lock', pidPath, err);
  }
  try {
    fs.linkSync(temp, pidPath);
    return true;
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw wrap('lock', pidPath, err);
  } finally {
    fs.rmSync(temp, { force: true });
  }
  // No hard links here: create with O_EXCL, then write. Readers meanwhile see an empty, young file.
  try {
    fs.writeFileSync(pidPath, line, { flag: 'wx' });
    return true;
  } catch (err) {
    if (errnoOf(err) === 'EEXIST') return false;
    throw wrap('lock', pidPath, err);
  }
}

/** Removes the stale lock file `judged`, unless a racer has replaced it since (then it stays). */
function removeStale(pidPath: string, judged: LockFileSnapshot, token: string): void {
  const aside = `${pidPath}.${token}.stale`;
  try {
    fs.renameSync(pidPath, aside);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return; // another opener took it aside first
    throw wrap('lock', pidPath, err);
  }
  try {
    const moved = readLockFile(aside);
    if (moved === undefined || (moved.ino === judged.ino && moved.mtimeMs === judged.mtimeMs && moved.text === judged.text)) return;
    // A racer removed the stale file and made its own live lock before our rename: put it back.
    try {
      fs.linkSync(aside, pidPath);
    } catch (err) {
      if (errnoOf(err) !== 'EEXIST') throw wrap('lock', pidPath, err); // EEXIST: see Limits
    }
  } finally {
    fs.rmSync(aside, { force: true });
  }
}

function lockedError(path: string, who: string): SieveError {
  return new SieveError(ErrorCode.LOCKED, `the database is already open: its lock is held by ${who}`, { file: path });
}

/**
 * node:crypto's randomBytes, loaded at the first lock: this module is imported by every thread
 * using the real file system, worker threads that take no lock among them, and loading
 * node:crypto took 9 ms of a worker's start-up (compaction/runner.ts).
 */
const randomBytes = (n: number): Buffer => (createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto')).randomBytes(n);

/**
 * fcntlLockHolder for `lockDirectory`, unless there is nothing to look at (no /proc/locks, no
 * `LOCK` yet) or `options.skipForeignCheck` says the look is not needed.
 */
function foreignLockHolder(path: string, options: LockOptions): string | undefined {
  if (!HAS_PROC_LOCKS || !fs.existsSync(path)) return undefined;
  let skip = false;
  try {
    skip = options.skipForeignCheck?.() === true;
  } catch {
    // A hint that throws is no hint: the look is made (and the pid lock is not left behind).
  }
  return skip ? undefined : fcntlLockHolder(path);
}

/**
 * Takes the lock `path` (LevelDB's LOCK name) for this database: see the file header. Once the
 * pid lock is ours, `options.skipForeignCheck` may spare the look for another program's fcntl
 * lock (db/close-mark.ts); it is asked only where that look would be made.
 */
export function lockDirectory(path: string, options: LockOptions = {}): FileLock {
  const pidPath = `${path}.pid`;
  const token = `${process.pid}-${threadId}-${randomBytes(8).toString('hex')}`;
  const line = `${process.pid} ${ownStart} ${threadId} ${token}\n`;
  for (let round = 1; !createExclusive(pidPath, line, token); round++) {
    const found = readLockFile(pidPath);
    const verdict = found === undefined ? { held: false as const } : judge(found, Date.now());
    if (verdict.held) throw lockedError(path, verdict.who);
    if (round >= MAX_ROUNDS) throw lockedError(path, `other openers: ${MAX_ROUNDS} rounds of taking it lost to them`);
    if (found !== undefined) removeStale(pidPath, found, token); // undefined: released meanwhile
  }
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    // Only our own lock file: one that is gone or names another holder is not ours to remove.
    if (parseHolder(readOrUndefined(pidPath) ?? '')?.token !== token) return;
    try {
      fs.rmSync(pidPath, { force: true });
    } catch (err) {
      throw wrap('unlock', pidPath, err);
    }
  };
  const other = foreignLockHolder(path, options);
  if (other !== undefined) {
    const locked = lockedError(path, other);
    try {
      release();
    } catch {
      // LOCKED says what happened; a pid file left behind names this process, which a later open
      // after this one exits takes for stale.
    }
    throw locked;
  }
  try {
    fs.closeSync(fs.openSync(path, 'a')); // LevelDB's LOCK file, empty, for LevelDB's sake.
  } catch (err) {
    release();
    throw wrap('lock', path, err);
  }
  return { release };
}

/**
 * Who holds a kernel lock on the file `path` (LevelDB's and RocksDB's fcntl lock on `LOCK`) as
 * `locks` (the text of /proc/locks, read only once `path` is found to exist) lists it, or
 * undefined: none, no such file, or no /proc/locks. A line:
 * `1: POSIX  ADVISORY  WRITE 4224 fe:00:2261545 0 EOF` (major and minor in hex, then the inode);
 * a waiter's line has `->` after the number and holds nothing yet.
 */
export function fcntlLockHolder(path: string, locks?: string): string | undefined {
  let stat: fs.BigIntStats;
  try {
    stat = fs.statSync(path, { bigint: true });
  } catch {
    return undefined; // no LOCK: nobody holds a lock on it (a new directory), and /proc/locks need not be read
  }
  locks ??= readOrUndefined('/proc/locks');
  if (locks === undefined || locks === '') return undefined;
  // glibc's major() and minor() of st_dev.
  const major = ((stat.dev >> 8n) & 0xfffn) | ((stat.dev >> 32n) & ~0xfffn);
  const minor = (stat.dev & 0xffn) | ((stat.dev >> 12n) & ~0xffn);
  for (const line of locks.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields[1] === '->') continue;
    const at = fields.findIndex((f) => /^[0-9a-f]+:[0-9a-f]+:\d+$/i.test(f));
    if (at < 2) continue;
    const [maj, min, ino] = fields[at]!.split(':') as [string, string, string];
    if (BigInt(`0x${maj}`) === major && BigInt(`0x${min}`) === minor && BigInt(ino) === stat.ino) {
      const kind = fields[1];
      if (kind === 'POSIX') return `process ${fields[at - 1]} (its POSIX lock on LOCK, as LevelDB and RocksDB take)`;
      if (kind === 'OFDLCK') return 'an open file description lock on LOCK (the kernel names no process)';
      return `process ${fields[at - 1]} (its ${kind} lock on LOCK)`;
    }
  }
  return undefined;
}
