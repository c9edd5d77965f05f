/**
 * sharedUserKeyPrefix: the bytes every user key of a merge's inputs starts with, found from the
 * files' bounds alone (the merge's heap compares the bytes after them first: merging-iterator.ts).
 * Property: for files cut from one sorted run of keys, every key of every file starts with that
 * many bytes of the first file's smallest key. And a merge whose input holds keys outside the
 * bounds it is recorded with (the windows then misorder the merge) fails with CORRUPTION.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runCompaction, sharedUserKeyPrefix } from '../../src/compaction/compaction.js';
import { isSieveError } from '../../src/errors.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
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

describe('sharedUserKeyPrefix', () => {
  it("finds db_bench keys' ten shared bytes, and less when a bound differs sooner", () => {
    expect(sharedUserKeyPrefix([])).toBe(0);
    expect(sharedUserKeyPrefix([file(1, '0000000000000017', '0000000000999981')])).toBe(10);
    expect(sharedUserKeyPrefix([file(1, '0000000000000017', '0000000000999981'), file(2, '0000000000000003', '0000000000500000')])).toBe(10);
    expect(sharedUserKeyPrefix([file(1, '0000000000000017', '0000000000999981'), file(2, '0001000000000003', '0001000000500000')])).toBe(3);
    // A bound that is a prefix of the others limits it to its length; an empty user key to 0.
    expect(sharedUserKeyPrefix([file(1, 'abc', 'abcdef')])).toBe(3);
    expect(sharedUserKeyPrefix([file(1, '', 'abcdef')])).toBe(0);
    expect(sharedUserKeyPrefix([file(1, 'same', 'same')])).toBe(4);
  });

  it('every key of files cut from one sorted run starts with that many bytes of the first bound', () => {
    const keysArb = fc.uniqueArray(fc.uint8Array({ maxLength: 10, max: 3 }), { minLength: 1, maxLength: 40, selector: (k) => Buffer.from(k).toString('hex') });
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 6 }), keysArb, fc.array(fc.nat(), { maxLength: 5 }), (prefix, raw, cuts) => {
        const keys = raw.map((k) => Uint8Array.of(...prefix, ...k)).sort(compareBytes);
        // Cut the run into files at the given points (in any order).
        const points = [...new Set(cuts.map((c) => c % keys.length))].sort((a, b) => a - b);
        const files: FileMetaData[] = [];
        let start = 0;
        for (const end of [...points.filter((p) => p > 0), keys.length]) {
          if (end > start) files.push(file(files.length + 1, keys[start]!, keys[end - 1]!));
          start = end;
        }
        const shuffled = files.reverse();
        const n = sharedUserKeyPrefix(shuffled);
        expect(n).toBeGreaterThanOrEqual(prefix.length);
        const head = shuffled[0]!.smallest.subarray(0, n);
        for (const k of keys) expect(Buffer.from(k.subarray(0, n)).equals(Buffer.from(head))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('a merge whose input holds keys outside its recorded range', () => {
  it('fails with CORRUPTION before building a table of misordered keys', () => {
    const mem = new MemFileSystem();
    mem.mkdir('/db');
    const write = (number: number, keys: string[], seq: number): void => {
      const f = mem.createWritable(tableFileName('/db', number));
      const b = new TableBuilder(f, { compression: CompressionType.NONE });
      for (const k of keys) b.add(ik(k, seq), Buffer.from(`v-${k}`));
      b.finish();
      f.close();
    };
    // Table 10 really ends with "z", but its metadata says it ends at "k150": the bounds share
    // "k1", so the heap orders by the bytes after it, where "z" (none) sorts first.
    write(10, ['k100', 'k120', 'k150', 'z'], 1);
    write(11, ['k160', 'k170'], 2);
    const sized = (f: FileMetaData): FileMetaData => ({ ...f, fileSize: mem.openReadable(tableFileName('/db', f.number)).size });
    const lying = sized(file(10, 'k100', 'k150'));
    const honest = sized(file(11, 'k160', 'k170'));
    expect(sharedUserKeyPrefix([lying, honest])).toBe(2);
    let error: unknown;
    try {
      runCompaction(mem, levelZeroMerge('/db', [honest, lying], { maxFileSize: 1 << 20 }));
    } catch (err) {
      error = err;
    }
    expect(isSieveError(error) && error.code).toBe('CORRUPTION');
    expect(String(error)).toMatch(/out of order/);
  });
});
