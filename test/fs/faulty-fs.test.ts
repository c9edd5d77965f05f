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
