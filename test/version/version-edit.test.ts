import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { NUM_LEVELS, VersionEdit } from '../../src/version/version-edit.js';
import { LogReader } from '../../src/wal/log-reader.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { fixturePath } from '../support/fixtures.js';

function manifestRecords(dir: string, name: string): Uint8Array[] {
  const fs = new MemFileSystem();
  fs.mkdir('/m');
  const w = fs.createWritable('/m/M');
  w.append(new Uint8Array(readFileSync(fixturePath(dir, name))));
  const reader = new LogReader(fs.openReadable('/m/M'));
  const out: Uint8Array[] = [];
  for (let r = reader.readRecord(); r !== null; r = reader.readRecord()) out.push(r.slice());
  return out;
}

const internalKey = fc.uint8Array({ minLength: 8, maxLength: 40 });
const level = fc.integer({ min: 0, max: NUM_LEVELS - 1 });
const region = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5 }));
const fileNumber = fc.integer({ min: 1, max: 2 ** 40 });

const editArb = fc
  .record({
    comparator: fc.option(fc.string(), { nil: undefined }),
    logNumber: fc.option(fileNumber, { nil: undefined }),
    prevLogNumber: fc.option(fileNumber, { nil: undefined }),
    nextFileNumber: fc.option(fileNumber, { nil: undefined }),
    lastSequence: fc.option(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), { nil: undefined }),
    pointers: fc.array(fc.tuple(region, level, internalKey), { maxLength: 4 }),
    deleted: fc.uniqueArray(fc.tuple(region, level, fileNumber), { maxLength: 6, selector: (d) => d.join() }),
    added: fc.array(fc.tuple(region, level, fileNumber, fc.integer({ min: 0, max: 2 ** 40 }), internalKey, internalKey), { maxLength: 6 }),
  })
  .map((r) => {
    const e = new VersionEdit();
    if (r.comparator !== undefined) e.comparator = r.comparator;
    if (r.logNumber !== undefined) e.logNumber = r.logNumber;
    if (r.prevLogNumber !== undefined) e.prevLogNumber = r.prevLogNumber;
    if (r.nextFileNumber !== undefined) e.nextFileNumber = r.nextFileNumber;
    if (r.lastSequence !== undefined) e.lastSequence = r.lastSequence;
    for (const [rg, l, k] of r.pointers) e.setCompactPointer(l, k, rg);
    for (const [rg, l, n] of r.deleted) e.deleteFile(l, n, rg);
    for (const [rg, l, number, fileSize, smallest, largest] of r.added) e.addFile(l, { number, fileSize, smallest, largest }, rg);
    return e;
  });

/** The edit's content, order-insensitive within each list where encoding regroups by region. */
function canonical(e: VersionEdit): unknown {
  const sort = <T>(xs: T[]): T[] => [...xs].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  const plain = (x: unknown): unknown => JSON.parse(JSON.stringify(x, (_k, v) => (v instanceof Uint8Array ? [...v] : v)));
  return plain({
    comparator: e.comparator,
    logNumber: e.logNumber,
    prevLogNumber: e.prevLogNumber,
    nextFileNumber: e.nextFileNumber,
    lastSequence: e.lastSequence,
    pointers: sort(plain(e.compactPointers) as unknown[]),
    deleted: sort(plain(e.deletedFiles) as unknown[]),
    added: sort(plain(e.newFiles) as unknown[]),
  });
}

describe('VersionEdit', () => {
  it('round-trips any edit, across regions', () => {
    fc.assert(
      fc.property(editArb, (edit) => {
        expect(canonical(VersionEdit.decode(edit.encode()))).toEqual(canonical(edit));
      }),
    );
  });

  it('writes no region tag for a single-region edit (LevelDB can read it)', () => {
    const e = new VersionEdit().addFile(1, { number: 5, fileSize: 10, smallest: new Uint8Array(8), largest: new Uint8Array(8) });
    expect(e.encode().includes(200)).toBe(false);
  });

  for (const [dir, name] of [
    ['ldb-small-nocomp', 'MANIFEST-000007'],
    ['ldb-snappy-small', 'MANIFEST-000026'],
    ['ldb-log-edges', 'MANIFEST-000002'],
  ] as const) {
    it(`decodes LevelDB's ${dir}/${name} and re-encodes each record to the same bytes`, () => {
      const records = manifestRecords(dir, name);
      const edits = records.map((r) => VersionEdit.decode(r));
      expect(edits[0]!.comparator).toBe('leveldb.BytewiseComparator');
      records.forEach((r, i) => expect(Buffer.compare(edits[i]!.encode(), r)).toBe(0));
      // Replaying the edits leaves exactly the table files present in the fixture directory.
      const live = new Set<number>();
      for (const e of edits) {
        for (const d of e.deletedFiles) live.delete(d.number);
        for (const f of e.newFiles) live.add(f.file.number);
      }
      const tables = readdirTables(dir);
      expect([...live].sort((a, b) => a - b)).toEqual(tables);
    });
  }

  it('rejects unknown tags, bad levels and truncations with CORRUPTION', () => {
    const edit = new VersionEdit();
    edit.comparator = 'leveldb.BytewiseComparator';
    edit.logNumber = 7;
    edit.addFile(2, { number: 9, fileSize: 1000, smallest: new Uint8Array(12).fill(1), largest: new Uint8Array(12).fill(2) });
    const bytes = edit.encode();
    for (let cut = 1; cut < bytes.length; cut++) {
      let caught: unknown;
      try {
        VersionEdit.decode(bytes.subarray(0, cut), 'MANIFEST-000001', 99);
      } catch (err) {
        caught = err;
      }
      // A cut can land on a field boundary and still decode (the record's length frames it in
      // the log); otherwise it must be CORRUPTION naming the file.
      if (caught !== undefined) {
        expect(isSieveError(caught, 'CORRUPTION')).toBe(true);
        expect((caught as Error).message).toContain('MANIFEST-000001');
      }
    }
    expect(() => VersionEdit.decode(new Uint8Array([8, 1]))).toThrow(/unknown VersionEdit tag 8/);
    expect(() => VersionEdit.decode(new Uint8Array([6, 7, 1]))).toThrow(/level 7/);
  });
});


function readdirTables(dir: string): number[] {
  return readdirSync(fixturePath(dir))
    .filter((f) => /^\d+\.(ldb|sst)$/.test(f))
    .map((f) => Number.parseInt(f, 10))
    .sort((a, b) => a - b);
}
