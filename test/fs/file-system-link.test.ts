/**
 * The FileSystem seam's `link` (hard links, for checkpoints), as a contract run against every
 * implementation (STYLE.md §12): the new name reads the same bytes, survives the removal of the
 * old one, refuses an existing name and a missing source with IO_ERROR; and a crash keeps a
 * linked name once its directory was synced. FaultyFileSystem can refuse it with any errno.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { isNotFound, type FileSystem } from '../../src/fs/file-system.js';
import { FaultyFileSystem } from '../../src/fs/faulty-fs.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import { bytes, fsImplementations, text, type FsSetup } from '../support/fs-implementations.js';


function write(fs: FileSystem, path: string, content: string): void {
  const w = fs.createWritable(path);
  w.append(bytes(content));
  w.sync();
  w.close();
}

describe.each(fsImplementations)('%s: link', (_name, make) => {
  let s: FsSetup;
  beforeEach(() => {
    s = make();
  });
  afterEach(() => s.cleanup());

  it('gives the file a second name that reads the same bytes and outlives the first', () => {
    const a = join(s.dir, '000005.ldb');
    const sub = join(s.dir, 'copy');
    s.fs.mkdir(sub);
    const b = join(sub, '000005.ldb');
    write(s.fs, a, 'table bytes');
    s.fs.link(a, b);
    expect(text(s.fs.readFile(b))).toBe('table bytes');
    expect(s.fs.size(b)).toBe(11);
    s.fs.remove(a);
    expect(s.fs.exists(a)).toBe(false);
    expect(text(s.fs.readFile(b))).toBe('table bytes');
    expect(s.fs.list(sub)).toEqual(['000005.ldb']);
  });

  it('refuses an existing name (EEXIST) and a missing source (ENOENT) with IO_ERROR', () => {
    const a = join(s.dir, 'a');
    const b = join(s.dir, 'b');
    write(s.fs, a, 'A');
    write(s.fs, b, 'B');
    let caught: unknown;
    try {
      s.fs.link(a, b);
    } catch (err) {
      caught = err;
    }
    expect(isSieveError(caught) && caught.code === 'IO_ERROR').toBe(true);
    expect((caught as { cause?: { code?: string } }).cause?.code).toBe('EEXIST');
    expect(text(s.fs.readFile(b))).toBe('B');
    try {
      s.fs.link(join(s.dir, 'missing'), join(s.dir, 'c'));
      caught = undefined;
    } catch (err) {
      caught = err;
    }
    expect(isNotFound(caught)).toBe(true);
    expect(s.fs.exists(join(s.dir, 'c'))).toBe(false);
  });
});

describe('link, implementation by implementation', () => {
  it('NodeFileSystem: a hard link, one inode with two names', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sievekv-link-'));
    try {
      const fs = new NodeFileSystem();
      write(fs, join(dir, 'a'), 'x');
      fs.link(join(dir, 'a'), join(dir, 'b'));
      expect(statSync(join(dir, 'b')).ino).toBe(statSync(join(dir, 'a')).ino);
      expect(statSync(join(dir, 'a')).nlink).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('MemFileSystem: a crash keeps the linked name only once its directory was synced', () => {
    const fs = new MemFileSystem();
    fs.mkdir('/db');
    fs.mkdir('/copy');
    write(fs, '/db/a', 'synced');
    fs.syncDir('/db');
    fs.link('/db/a', '/copy/a');
    expect(fs.crashClone().exists('/copy/a')).toBe(false);
    fs.syncDir('/copy');
    expect(text(fs.crashClone().readFile('/copy/a'))).toBe('synced');
  });

  it('FaultyFileSystem: refuses a link with the errno asked for, and counts the call', () => {
    const mem = new MemFileSystem();
    mem.mkdir('/db');
    write(mem, '/db/a', 'x');
    const fs = new FaultyFileSystem(mem);
    fs.inject({ ops: ['link'], errno: 'EXDEV', sticky: true });
    expect(() => fs.link('/db/a', '/db/b')).toThrow(/link failed: EXDEV/);
    expect(fs.calls.link).toBe(1);
    expect(mem.exists('/db/b')).toBe(false);
  });
});
