import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { rng } from '../support/seed.js';

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

describe('MemFileSystem.crashClone({ rng }): the harsh crash', () => {
  /** A file of synced and unsynced appends; returns every byte appended and the synced count. */
  function writeFile(fs: MemFileSystem, path: string, steps: readonly [Uint8Array, boolean][]): { all: number[]; synced: number } {
    const w = fs.createWritable(path);
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
    return { all, synced };
  }

  const stepsArb = fc.array(fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.boolean()), { maxLength: 20 });

  it('keeps the synced bytes and a prefix of the unsynced ones, never other bytes; with zeroFill, zeros after', () => {
    fc.assert(
      fc.property(stepsArb, stepsArb, fc.integer(), fc.boolean(), (stepsA, stepsB, seed, zeroFill) => {
        const fs = new MemFileSystem();
        fs.mkdir('/d');
        const a = writeFile(fs, '/d/a', stepsA);
        const b = writeFile(fs, '/d/b', stepsB);
        fs.syncDir('/d');
        const clone = fs.crashClone({ rng: rng(seed), zeroFill: zeroFill ? 0.5 : 0 });
        for (const [path, { all, synced }] of [['/d/a', a], ['/d/b', b]] as const) {
          const got = [...clone.readFile(path)];
          expect(got.length).toBeGreaterThanOrEqual(synced);
          expect(got.length).toBeLessThanOrEqual(all.length);
          let real = got.length;
          if (zeroFill) while (real > synced && got[real - 1] === 0 && all[real - 1] !== 0) real--;
          expect(got.slice(0, real)).toEqual(all.slice(0, real));
          expect(got.slice(real).every((x) => x === 0)).toBe(true);
        }
      }),
    );
  });

  it('the same seed gives the same crash; the original is untouched', () => {
    const fs = new MemFileSystem();
    fs.mkdir('/d');
    writeFile(fs, '/d/a', [[new Uint8Array(1000).fill(7), false]]);
    const image = (seed: number): number => {
      const clone = fs.crashClone({ rng: rng(seed) });
      return clone.exists('/d/a') ? clone.size('/d/a') : -1;
    };
    for (let seed = 0; seed < 20; seed++) expect(image(seed)).toBe(image(seed));
    expect(fs.size('/d/a')).toBe(1000);
  });

  it('over seeds: a file keeps none, all or part of its unsynced bytes, and files decide independently', () => {
    const fs = new MemFileSystem();
    fs.mkdir('/d');
    writeFile(fs, '/d/old', [[bytes('synced'), true], [new Uint8Array(100).fill(1), false]]);
    writeFile(fs, '/d/new', [[new Uint8Array(100).fill(2), false]]);
    fs.syncDir('/d');
    const seen = new Set<string>();
    let reordered = false;
    for (let seed = 0; seed < 200; seed++) {
      const clone = fs.crashClone({ rng: rng(seed) });
      const old = clone.size('/d/old') - 6;
      const young = clone.size('/d/new');
      seen.add(old === 0 ? 'none' : old === 100 ? 'all' : 'part');
      // The later file kept bytes the earlier one lost: a reordering no single log would show.
      if (young > 0 && old === 0) reordered = true;
    }
    expect([...seen].sort()).toEqual(['all', 'none', 'part']);
    expect(reordered).toBe(true);
  });

  it('a name changed since the last syncDir survives or not: creations, removals, renames', () => {
    const fs = new MemFileSystem();
    fs.mkdir('/d');
    writeFile(fs, '/d/CURRENT', [[bytes('MANIFEST-1\n'), true]]);
    writeFile(fs, '/d/gone', [[bytes('x'), true]]);
    writeFile(fs, '/d/kept', [[bytes('k'), true]]);
    fs.syncDir('/d');
    writeFile(fs, '/d/created', [[bytes('c'), true]]);
    fs.remove('/d/gone');
    writeFile(fs, '/d/CURRENT.tmp', [[bytes('MANIFEST-2\n'), true]]);
    fs.rename('/d/CURRENT.tmp', '/d/CURRENT');
    const outcomes = { created: new Set<boolean>(), gone: new Set<boolean>(), current: new Set<string>() };
    for (let seed = 0; seed < 100; seed++) {
      const clone = fs.crashClone({ rng: rng(seed) });
      expect(text(clone.readFile('/d/kept'))).toBe('k'); // directory-synced: always there
      outcomes.created.add(clone.exists('/d/created'));
      outcomes.gone.add(clone.exists('/d/gone'));
      outcomes.current.add(`${text(clone.readFile('/d/CURRENT'))}|${clone.exists('/d/CURRENT.tmp')}`);
    }
    expect([...outcomes.created].sort()).toEqual([false, true]);
    expect([...outcomes.gone].sort()).toEqual([false, true]);
    // Old or new CURRENT; the temporary name lived only between two directory syncs, so it is
    // not among the names a crash may bring back.
    expect([...outcomes.current].sort()).toEqual(['MANIFEST-1\n|false', 'MANIFEST-2\n|false']);
    fs.syncDir('/d');
    for (let seed = 0; seed < 20; seed++) {
      const clone = fs.crashClone({ rng: rng(seed) });
      expect(text(clone.readFile('/d/CURRENT'))).toBe('MANIFEST-2\n');
      expect(clone.exists('/d/gone') || clone.exists('/d/CURRENT.tmp')).toBe(false);
    }
  });

  it('without rng, the deterministic crash keeps exactly what was synced', () => {
    const fs = new MemFileSystem();
    fs.mkdir('/d');
    writeFile(fs, '/d/a', [[bytes('durable'), true], [bytes('-lost'), false]]);
    fs.syncDir('/d');
    writeFile(fs, '/d/unnamed', [[bytes('data'), true]]);
    for (let i = 0; i < 5; i++) {
      const clone = fs.crashClone();
      expect(text(clone.readFile('/d/a'))).toBe('durable');
      expect(clone.exists('/d/unnamed')).toBe(false);
    }
  });
});
