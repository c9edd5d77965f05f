/**
 * One contract suite for every FileSystem implementation (STYLE.md §12): what the database relies
 * on, run against real files and against memory.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode, isSieveError } from '../../src/errors.js';
import { isNotFound, readFully } from '../../src/fs/file-system.js';
import { bytes, fsImplementations, text, type FsSetup } from '../support/fs-implementations.js';
import { thrownBy } from '../support/error-code.js';

describe.each(fsImplementations)('%s', (_name, make) => {
  let s: FsSetup;
  beforeEach(() => {
    s = make();
  });
  afterEach(() => s.cleanup());

  it('appends and reads back at any offset', () => {
    const path = join(s.dir, 'a.log');
    const w = s.fs.createWritable(path);
    w.append(bytes('hello '));
    w.append(bytes('xxworldxx'), 2, 7);
    expect(w.size).toBe(11);
    w.sync();
    w.close();
    expect(text(s.fs.readFile(path))).toBe('hello world');
    expect(s.fs.size(path)).toBe(11);
    const r = s.fs.openReadable(path);
    expect(r.size).toBe(11);
    const buf = new Uint8Array(8);
    expect(r.readAt(buf, 1, 5, 6)).toBe(5);
    expect(text(buf.subarray(1, 6))).toBe('world');
    expect(r.readAt(buf, 0, 8, 9)).toBe(2); // short read at the end
    expect(r.readAt(buf, 0, 8, 11)).toBe(0);
    expect(text(readFully(r, 0, 100))).toBe('hello world');
    r.close();
    // After close: IO_ERROR, and nothing read (a descriptor's number may name another file by then).
    buf.fill(7);
    expect(() => r.readAt(buf, 0, 5, 0)).toThrow(expect.objectContaining({ code: ErrorCode.IO_ERROR }));
    expect(buf.every((b) => b === 7)).toBe(true);
  });

  it('createWritable truncates; openAppendable continues at the end', async () => {
    const path = join(s.dir, 'b');
    let w = s.fs.createWritable(path);
    w.append(bytes('abc'));
    w.close();
    w = s.fs.openAppendable(path);
    expect(w.size).toBe(3);
    w.append(bytes('def'));
    await w.syncAsync();
    w.close();
    expect(text(s.fs.readFile(path))).toBe('abcdef');
    s.fs.createWritable(path).close();
    expect(s.fs.size(path)).toBe(0);
  });

  it('lists, renames atomically over an existing name, and removes', () => {
    const a = join(s.dir, 'CURRENT.tmp');
    const b = join(s.dir, 'CURRENT');
    for (const [p, c] of [[a, 'new'], [b, 'old']] as const) {
      const w = s.fs.createWritable(p);
      w.append(bytes(c));
      w.close();
    }
    expect(s.fs.list(s.dir).sort()).toEqual(['CURRENT', 'CURRENT.tmp']);
    s.fs.rename(a, b);
    s.fs.syncDir(s.dir);
    expect(s.fs.list(s.dir)).toEqual(['CURRENT']);
    expect(text(s.fs.readFile(b))).toBe('new');
    s.fs.remove(b);
    s.fs.remove(b); // missing: not an error
    expect(s.fs.exists(b)).toBe(false);
    expect(s.fs.list(s.dir)).toEqual([]);
  });

  it('reports a missing file as IO_ERROR with ENOENT', () => {
    const missing = join(s.dir, 'nope');
    for (const call of [() => s.fs.readFile(missing), () => s.fs.openReadable(missing), () => s.fs.size(missing)]) {
      const caught = thrownBy(call);
      expect(isSieveError(caught, 'IO_ERROR')).toBe(true);
      expect(isNotFound(caught)).toBe(true);
    }
  });

  it('mkdir is recursive and idempotent', () => {
    const deep = join(s.dir, 'x', 'y');
    s.fs.mkdir(deep);
    s.fs.mkdir(deep);
    expect(s.fs.exists(deep)).toBe(true);
    expect(s.fs.list(join(s.dir, 'x'))).toEqual(['y']);
  });

  it('locks exclusively until released', () => {
    const path = join(s.dir, 'LOCK');
    const lock = s.fs.lock(path);
    let caught: unknown;
    try {
      s.fs.lock(path);
    } catch (err) {
      caught = err;
    }
    expect(isSieveError(caught, 'LOCKED')).toBe(true);
    lock.release();
    lock.release();
    s.fs.lock(path).release();
    expect(s.fs.exists(path)).toBe(true); // LevelDB's LOCK file stays, as LevelDB leaves it
  });
});
