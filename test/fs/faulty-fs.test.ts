import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { FaultyFileSystem } from '../../src/fs/faulty-fs.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

function setup(): { mem: MemFileSystem; fs: FaultyFileSystem } {
  const mem = new MemFileSystem();
  mem.mkdir('/d');
  return { mem, fs: new FaultyFileSystem(mem) };
}

describe('FaultyFileSystem', () => {
  it('fails the matching call after N successes, once unless sticky', () => {
    const { fs } = setup();
    fs.inject({ ops: ['sync'], after: 2, errno: 'ENOSPC' });
    const w = fs.createWritable('/d/a');
    w.sync();
    w.sync();
    let caught: unknown;
    try {
      w.sync();
    } catch (err) {
      caught = err;
    }
    expect(isSieveError(caught, 'IO_ERROR')).toBe(true);
    expect((caught as Error).cause).toMatchObject({ code: 'ENOSPC' });
    w.sync(); // not sticky: later calls pass
    expect(fs.injected).toEqual([{ op: 'sync', path: '/d/a' }]);
  });

  it('sticky faults keep failing; path patterns select files', () => {
    const { fs } = setup();
    fs.inject({ ops: ['append'], path: /\.log$/, sticky: true });
    const table = fs.createWritable('/d/000001.ldb');
    table.append(bytes('ok'));
    const log = fs.createWritable('/d/000002.log');
    expect(() => log.append(bytes('x'))).toThrow(/EIO/);
    expect(() => log.append(bytes('x'))).toThrow(/EIO/);
    fs.clearFaults();
    log.append(bytes('x'));
  });

  it('a partial append writes half the bytes before failing (a torn write)', () => {
    const { mem, fs } = setup();
    fs.inject({ ops: ['append'], partial: true });
    const w = fs.createWritable('/d/f');
    expect(() => w.append(bytes('abcdefgh'))).toThrow();
    expect(new TextDecoder().decode(mem.readFile('/d/f'))).toBe('abcd');
  });

  it('async sync failures reject', async () => {
    const { fs } = setup();
    const disarm = fs.inject({ ops: ['sync'] });
    const w = fs.createWritable('/d/f');
    await expect(w.syncAsync()).rejects.toThrow(/EIO/);
    disarm();
    await expect(w.syncAsync()).resolves.toBeUndefined();
  });
});

describe('FaultyFileSystem: the n-th call of any kind', () => {
  it('counts every call per kind, and `after: n` fails exactly the n-th (0-based) call of that kind', () => {
    for (let n = 0; n < 4; n++) {
      const { fs } = setup();
      fs.inject({ ops: ['syncDir'], after: n });
      for (let i = 0; i < 4; i++) {
        if (i === n) expect(() => fs.syncDir('/d'), `call ${i}`).toThrow(/EIO/);
        else fs.syncDir('/d');
      }
      expect(fs.calls.syncDir).toBe(4);
      expect(fs.injected).toEqual([{ op: 'syncDir', path: '/d' }]);
    }
  });

  it('a syncAsync is also a sync: a sync fault covers both forms, a syncAsync fault only the async one', async () => {
    const { fs } = setup();
    const w = fs.createWritable('/d/f');
    fs.inject({ ops: ['syncAsync'], after: 1 });
    w.sync();
    await w.syncAsync();
    w.sync();
    await expect(w.syncAsync()).rejects.toThrow(/syncAsync failed: EIO/);
    expect(fs.calls).toMatchObject({ sync: 4, syncAsync: 2, create: 1 });
    fs.clearFaults();
    fs.inject({ ops: ['sync'], after: 1 });
    w.sync();
    await expect(w.syncAsync()).rejects.toThrow(/EIO/);
  });

  it('close, size, list, read and the other kinds fail on their n-th call; a failed close still closes', () => {
    const { mem, fs } = setup();
    const w = fs.createWritable('/d/f');
    w.append(bytes('abc'));
    fs.inject({ ops: ['close'] });
    expect(() => w.close()).toThrow(/close failed: EIO/);
    expect(() => w.append(bytes('x'))).toThrow(); // closed all the same
    expect(new TextDecoder().decode(mem.readFile('/d/f'))).toBe('abc');
    fs.inject({ ops: ['size'], after: 1 });
    expect(fs.size('/d/f')).toBe(3);
    expect(() => fs.size('/d/f')).toThrow(/size failed/);
    fs.inject({ ops: ['read'], after: 2 });
    const r = fs.openReadable('/d/f');
    const buf = new Uint8Array(1);
    r.readAt(buf, 0, 1, 0);
    r.readAt(buf, 0, 1, 1);
    expect(() => r.readAt(buf, 0, 1, 2)).toThrow(/read failed/);
    fs.inject({ ops: ['list', 'rename'], after: 1 });
    fs.list('/d');
    expect(() => fs.rename('/d/f', '/d/g')).toThrow(/rename failed/);
    expect(fs.calls).toMatchObject({ create: 1, append: 2, close: 1, size: 2, openReadable: 1, read: 3, list: 1, rename: 1 });
  });
});
