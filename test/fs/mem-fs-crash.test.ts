import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array): string => new TextDecoder().decode(b);

describe('MemFileSystem.crashClone', () => {
  it('keeps synced bytes and drops the unsynced tail', () => {
    const fs = new MemFileSystem();
    fs.mkdir('/d');
    const w = fs.createWritable('/d/log');
    fs.syncDir('/d');
    w.append(bytes('durable'));
    w.sync();
    w.append(bytes('-lost'));
    const after = fs.crashClone();
    expect(text(after.readFile('/d/log'))).toBe('durable');
    expect(text(fs.readFile('/d/log'))).toBe('durable-lost'); // the original is untouched
  });

  it('loses a created file whose directory was not synced, and keeps an old name until a rename is synced', () => {
    const fs = new MemFileSystem();
    fs.mkdir('/d');
    const cur = fs.createWritable('/d/CURRENT');
    cur.append(bytes('MANIFEST-1\n'));
    cur.sync();
    fs.syncDir('/d');
    const tmp = fs.createWritable('/d/CURRENT.tmp');
    tmp.append(bytes('MANIFEST-2\n'));
    tmp.sync();
    fs.rename('/d/CURRENT.tmp', '/d/CURRENT');
    const before = fs.crashClone();
    expect(text(before.readFile('/d/CURRENT'))).toBe('MANIFEST-1\n');
    expect(before.exists('/d/CURRENT.tmp')).toBe(false);
    fs.syncDir('/d');
    expect(text(fs.crashClone().readFile('/d/CURRENT'))).toBe('MANIFEST-2\n');
  });

  it('with strictNames off, names are durable at once', () => {
    const fs = new MemFileSystem({ strictNames: false });
    fs.mkdir('/d');
    const w = fs.createWritable('/d/f');
    w.append(bytes('x'));
    w.sync();
    expect(text(fs.crashClone().readFile('/d/f'))).toBe('x');
  });

  it('a crash keeps exactly the synced prefix of any append/sync sequence', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.uint8Array({ maxLength: 40 }), fc.boolean()), { maxLength: 30 }),
        (steps) => {
          const fs = new MemFileSystem();
          fs.mkdir('/d');
          const w = fs.createWritable('/d/f');
          fs.syncDir('/d');
          const all: number[] = [];
          let synced = 0;
          for (const [chunk, sync] of steps) {
            w.append(chunk);
            all.push(...chunk);
            if (sync) {
              w.sync();
              synced = all.length;
            }
          }
          expect([...fs.crashClone().readFile('/d/f')]).toEqual(all.slice(0, synced));
        },
      ),
    );
  });

  it('locks do not survive a crash', () => {
    const fs = new MemFileSystem();
    fs.mkdir('/d');
    fs.lock('/d/LOCK');
    expect(() => fs.crashClone().lock('/d/LOCK').release()).not.toThrow();
  });
});
