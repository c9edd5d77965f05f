/**
 * sharedPrefixLength: the bytes every user key of a merge's inputs starts with, found from the
 * files' bounds alone (the merge's heap compares the bytes after them first: merging-iterator.ts).
 * Property: for files cut from one sorted run of keys, every key of every file starts with that
 * many bytes of the first file's smallest key. And a merge whose input holds keys outside the
 * bounds it is recorded with (the windows would misorder the merge), or is out of order in itself,
 * fails with CORRUPTION and keeps nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runCompaction } from '../../src/compaction/compaction.js';
import { sharedPrefixLength } from '../../src/version/version.js';
import { isSieveError } from '../../src/errors.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { InternalKeyComparator } from '../../src/format/internal-key-comparator.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { TableBuilder } from '../../src/sstable/table-builder.js';
import { tableFileName } from '../../src/version/filenames.js';
import { levelZeroMerge } from '../support/compaction-task.js';
import { compareBytes } from '../../src/format/bytes.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import type { FileMetaData } from '../../src/version/version-edit.js';

const ik = (user: Uint8Array | string, seq = 1): Uint8Array =>
  encodeInternalKey(typeof user === 'string' ? Buffer.from(user) : user, seq, ValueType.VALUE);
const file = (number: number, smallest: Uint8Array | string, largest: Uint8Array | string): FileMetaData => ({
  number,
  fileSize: 100,
  smallest: ik(smallest),
  largest: ik(largest),
});

describe('sharedPrefixLength', () => {
  it("finds db_bench keys' ten shared bytes, and less when a bound differs sooner", () => {
    expect(sharedPrefixLength([])).toBe(0);
    expect(sharedPrefixLength([file(1, '0000000000000017', '0000000000999981')])).toBe(10);
    expect(sharedPrefixLength([file(1, '0000000000000017', '0000000000999981'), file(2, '0000000000000003', '0000000000500000')])).toBe(10);
    expect(sharedPrefixLength([file(1, '0000000000000017', '0000000000999981'), file(2, '0001000000000003', '0001000000500000')])).toBe(3);
    // A bound that is a prefix of the others limits it to its length; an empty user key to 0.
    expect(sharedPrefixLength([file(1, 'abc', 'abcdef')])).toBe(3);
    expect(sharedPrefixLength([file(1, '', 'abcdef')])).toBe(0);
    expect(sharedPrefixLength([file(1, 'same', 'same')])).toBe(4);
  });

  it('every key of files cut from one sorted run (and files overlapping them) starts with that many bytes of the first bound', () => {
    const keysArb = fc.uniqueArray(fc.uint8Array({ maxLength: 10, max: 3 }), { minLength: 1, maxLength: 40, selector: (k) => Buffer.from(k).toString('hex') });
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 6 }), keysArb, fc.array(fc.nat(), { maxLength: 5 }), fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 3 }), (prefix, raw, cuts, overlaps) => {
        const keys = raw.map((k) => Uint8Array.of(...prefix, ...k)).sort(compareBytes);
        // Cut the run into files at the given points (in any order).
        const points = [...new Set(cuts.map((c) => c % keys.length))].sort((a, b) => a - b);
        const files: FileMetaData[] = [];
        let start = 0;
        for (const end of [...points.filter((p) => p > 0), keys.length]) {
          if (end > start) files.push(file(files.length + 1, keys[start]!, keys[end - 1]!));
          start = end;
        }
        // And files overlapping them (a level-0 file spans any range of the run).
        for (const [a, b] of overlaps) {
          const lo = Math.min(a % keys.length, b % keys.length);
          const hi = Math.max(a % keys.length, b % keys.length);
          files.push(file(files.length + 1, keys[lo]!, keys[hi]!));
        }
        files.reverse(); // the first file need not hold the smallest key
        const n = sharedPrefixLength(files);
        expect(n).toBeGreaterThanOrEqual(prefix.length);
        const head = files[0]!.smallest.subarray(0, n);
        for (const k of keys) expect(Buffer.from(k.subarray(0, n)).equals(Buffer.from(head))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('a merge whose input holds keys outside its recorded range', () => {
  /** Table 10 really ends with "z", but its metadata says it ends at "k150"; table 11 is honest. */
  function lyingInputs(): { mem: MemFileSystem; lying: FileMetaData; honest: FileMetaData } {
    const mem = new MemFileSystem();
    mem.mkdir('/db');
    const write = (number: number, keys: string[], seq: number): void => {
      const f = mem.createWritable(tableFileName('/db', number));
      const b = new TableBuilder(f, { compression: CompressionType.NONE });
      for (const k of keys) b.add(ik(k, seq), Buffer.from(`v-${k}`));
      b.finish();
      f.close();
    };
    write(10, ['k100', 'k120', 'k150', 'z'], 1);
    write(11, ['k130', 'k140', 'k160', 'k170'], 2);
    const sized = (f: FileMetaData): FileMetaData => ({ ...f, fileSize: mem.openReadable(tableFileName('/db', f.number)).size });
    return { mem, lying: sized(file(10, 'k100', 'k150')), honest: sized(file(11, 'k130', 'k170')) };
  }

  const failure = (run: () => unknown): unknown => {
    try {
      run();
    } catch (err) {
      return err;
    }
    return undefined;
  };

  it('fails with CORRUPTION, whole or as one part of a split merge (which would stop early and lose keys)', () => {
    // The bounds share "k1": the heap orders by the bytes after it, where "z" has none and would
    // sort first. A part ending at "k155" would then stop at "z" before "k130"…"k150" were
    // written, and the part after it would start past them.
    const { mem, lying, honest } = lyingInputs();
    expect(sharedPrefixLength([lying, honest])).toBe(2);
    for (const part of [{}, { end: Buffer.from('k155') }, { begin: Buffer.from('k155') }]) {
      const error = failure(() => runCompaction(mem, levelZeroMerge('/db', [honest, lying], { maxFileSize: 1 << 20, ...part })));
      expect(isSieveError(error) && error.code, JSON.stringify(part)).toBe('CORRUPTION');
      expect(String(error)).toMatch(/outside its table's recorded key range/);
      // Nothing of the merge is kept; its inputs stay.
      expect(mem.list('/db').filter((n) => n.endsWith('.ldb')).sort()).toEqual(['000010.ldb', '000011.ldb']);
    }
  });

  it('an input table out of order in itself (keys in its range, so the prefix holds) fails with CORRUPTION', () => {
    const mem = new MemFileSystem();
    mem.mkdir('/db');
    // A table builder that takes any order: its user order says every key is larger.
    const anyOrder = new InternalKeyComparator({
      name: 'test.AnyOrder',
      compare: () => 1,
      findShortestSeparator: (start) => start,
      findShortSuccessor: (key) => key,
    });
    const write = (number: number, keys: string[], comparator?: InternalKeyComparator): FileMetaData => {
      const f = mem.createWritable(tableFileName('/db', number));
      const b = new TableBuilder(f, { compression: CompressionType.NONE, ...(comparator !== undefined ? { comparator } : {}) });
      for (const k of keys) b.add(ik(k, number), Buffer.from(`v-${k}`));
      b.finish();
      f.close();
      return { number, fileSize: b.fileSize, smallest: ik(keys.reduce((x, y) => (x < y ? x : y)), number), largest: ik(keys.reduce((x, y) => (x > y ? x : y)), number) };
    };
    const unsorted = write(10, ['k100', 'k150', 'k120'], anyOrder);
    const honest = write(11, ['k130', 'k140']);
    const error = failure(() => runCompaction(mem, levelZeroMerge('/db', [honest, unsorted], { maxFileSize: 1 << 20 })));
    expect(isSieveError(error) && error.code).toBe('CORRUPTION');
    expect(String(error)).toMatch(/out of order/);
    expect(mem.list('/db').filter((n) => n.endsWith('.ldb')).sort()).toEqual(['000010.ldb', '000011.ldb']);
  });
});
