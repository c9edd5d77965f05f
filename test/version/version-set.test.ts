import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { FaultyFileSystem } from '../../src/fs/faulty-fs.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { VersionSet } from '../../src/version/version-set.js';
import { VersionEdit, type FileMetaData } from '../../src/version/version-edit.js';
import { fixturePath } from '../support/fixtures.js';

const te = new TextEncoder();
const ikey = (k: string, seq = 1): Uint8Array => encodeInternalKey(te.encode(k), seq, ValueType.VALUE);
const file = (number: number, lo: string, hi: string, size = 1000): FileMetaData => ({ number, fileSize: size, smallest: ikey(lo), largest: ikey(hi) });

function freshFs(): MemFileSystem {
  const fs = new MemFileSystem();
  fs.mkdir('/db');
  return fs;
}

/** A plain description of a version's files, for comparisons. */
function layout(vs: VersionSet): number[][][] {
  return vs.current.regions.map((levels) => levels.map((files) => files.map((f) => f.number)));
}

describe('VersionSet', () => {
  it('creates, applies edits, and recovers the same state after reopen', () => {
    const fs = freshFs();
    const vs = new VersionSet('/db', fs, 1);
    vs.createNew();
    vs.recover();
    const n1 = vs.newFileNumber();
    const n2 = vs.newFileNumber();
    vs.lastSequence = 42;
    vs.logAndApply(new VersionEdit().addFile(0, file(n1, 'a', 'm')).addFile(0, file(n2, 'c', 'z')));
    const n3 = vs.newFileNumber();
    vs.lastSequence = 50;
    vs.logAndApply(new VersionEdit().deleteFile(0, n1).deleteFile(0, n2).addFile(1, file(n3, 'a', 'z')).setCompactPointer(1, ikey('m')));
    expect(layout(vs)[0]).toEqual([[], [n3], [], [], [], [], []]);
    vs.close();

    const again = new VersionSet('/db', fs, 1);
    again.recover();
    expect(layout(again)).toEqual(layout(vs));
    expect(again.lastSequence).toBe(50);
    expect(again.nextFileNumber).toBeGreaterThan(n3);
    expect(again.compactPointers[0]![1]).toEqual(ikey('m'));
    expect(new TextDecoder().decode(fs.readFile('/db/CURRENT'))).toBe(`MANIFEST-${String(again.manifestFileNumber).padStart(6, '0')}\n`);
  });

  it('keeps level 0 newest first and finds lookup candidates in LevelDB order', () => {
    const fs = freshFs();
    const vs = new VersionSet('/db', fs, 1);
    vs.createNew();
    vs.recover();
    vs.logAndApply(
      new VersionEdit()
        .addFile(0, file(10, 'a', 'k'))
        .addFile(0, file(12, 'f', 'p'))
        .addFile(1, file(5, 'a', 'e'))
        .addFile(1, file(6, 'g', 'h'))
        .addFile(2, file(3, 'a', 'z')),
    );
    const seen: [number, number][] = [];
    vs.current.forEachCandidate(0, te.encode('g'), (f, level) => {
      seen.push([level, f.number]);
      return false;
    });
    expect(seen).toEqual([[0, 12], [0, 10], [1, 6], [2, 3]]);
    const l0 = (lo: string, hi: string): number[] =>
      vs.current.overlappingInputs(0, 0, te.encode(lo), te.encode(hi)).map((f) => f.number).sort((a, b) => a - b);
    // L0 expansion is transitive: m..n hits file 12 (f..p), whose range reaches file 10 (a..k).
    expect(l0('m', 'n')).toEqual([10, 12]);
    expect(l0('b', 'b')).toEqual([10, 12]);
    expect(l0('q', 'z')).toEqual([]);
    const l1 = vs.current.overlappingInputs(0, 1, te.encode('f'), te.encode('g')).map((f) => f.number);
    expect(l1).toEqual([6]); // deeper levels do not expand
    expect(vs.current.overlapsLevel(0, 1, te.encode('ee'), te.encode('f'))).toBe(false);
    expect(vs.current.overlapsLevel(0, 1, te.encode('ee'), te.encode('g'))).toBe(true);
  });

  it('rejects overlapping files in a level ≥ 1 as CORRUPTION', () => {
    const fs = freshFs();
    const vs = new VersionSet('/db', fs, 1);
    vs.createNew();
    vs.recover();
    expect(() => vs.logAndApply(new VersionEdit().addFile(1, file(7, 'a', 'm')).addFile(1, file(8, 'k', 'z')))).toThrow(/overlapping/);
  });

  it('a crash at any point recovers either the old or the new state', () => {
    const fs = freshFs();
    const vs = new VersionSet('/db', fs, 1);
    vs.createNew();
    const states: number[][][][] = [];
    const clones: MemFileSystem[] = [fs.crashClone()];
    vs.recover();
    states.push(layout(vs));
    for (let i = 0; i < 5; i++) {
      const n = vs.newFileNumber();
      vs.logAndApply(new VersionEdit().addFile(0, file(n, `k${i}`, `k${i}z`)));
      states.push(layout(vs));
      clones.push(fs.crashClone());
    }
    clones.forEach((clone, i) => {
      const r = new VersionSet('/db', clone, 1);
      r.recover();
      expect(layout(r)).toEqual(states[i]);
    });
  });

  it('a failed MANIFEST write installs nothing, and the next edit succeeds on a new MANIFEST', () => {
    const mem = freshFs();
    const fs = new FaultyFileSystem(mem);
    const vs = new VersionSet('/db', fs, 1);
    vs.createNew();
    vs.recover();
    vs.logAndApply(new VersionEdit().addFile(0, file(vs.newFileNumber(), 'a', 'b')));
    const before = layout(vs);
    const disarm = fs.inject({ ops: ['sync'], path: /MANIFEST/ });
    let caught: unknown;
    try {
      vs.logAndApply(new VersionEdit().addFile(0, file(vs.newFileNumber(), 'c', 'd')));
    } catch (err) {
      caught = err;
    }
    disarm();
    expect(isSieveError(caught, 'IO_ERROR')).toBe(true);
    expect(layout(vs)).toEqual(before);
    vs.logAndApply(new VersionEdit().addFile(0, file(vs.newFileNumber(), 'e', 'f')));
    const r = new VersionSet('/db', mem, 1);
    r.recover();
    expect(layout(r)).toEqual(layout(vs));
  });

  it('reports a missing or malformed CURRENT as CORRUPTION', () => {
    const fs = freshFs();
    const w = fs.createWritable('/db/CURRENT');
    w.append(te.encode('garbage'));
    w.close();
    expect(() => new VersionSet('/db', fs, 1).recover()).toThrow(/CURRENT does not name a MANIFEST/);
    const w2 = fs.createWritable('/db/CURRENT');
    w2.append(te.encode('MANIFEST-000009\n'));
    w2.close();
    expect(() => new VersionSet('/db', fs, 1).recover()).toThrow(/does not exist/);
  });

  for (const dir of ['ldb-small-nocomp', 'ldb-snappy-small', 'ldb-log-edges']) {
    it(`recovers LevelDB's ${dir} MANIFEST: the tables on disk, by level`, () => {
      const fs = freshFs();
      for (const name of readdirSync(fixturePath(dir))) {
        const w = fs.createWritable(`/db/${name}`);
        w.append(new Uint8Array(readFileSync(fixturePath(dir, name))));
        w.close();
      }
      const vs = new VersionSet('/db', fs, 1);
      vs.recover();
      const tables = readdirSync(fixturePath(dir)).filter((f) => f.endsWith('.ldb')).map((f) => Number.parseInt(f, 10));
      expect([...vs.liveFiles()].sort((a, b) => a - b)).toEqual(tables.sort((a, b) => a - b));
      const logs = readdirSync(fixturePath(dir)).filter((f) => f.endsWith('.log')).map((f) => Number.parseInt(f, 10));
      expect(vs.logNumber).toBe(logs[0]);
      if (dir === 'ldb-snappy-small') expect(layout(vs)[0]!.slice(0, 3)).toEqual([[27], [25], [12]]);
    });
  }
});
