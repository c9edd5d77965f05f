/**
 * Boundary inputs (LevelDB's AddBoundaryInputs). LevelDB cuts compaction outputs anywhere, so a
 * LevelDB-made level can hold k@5 as the last entry of one file and k@3 as the first of the next.
 * Compacting (or moving) the first file alone leaves k@3 above k@5, and reads then find the older
 * version. The picker must take such neighbours along.
 */
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { pickCompaction, pickRangeCompaction, type PickerOptions } from '../../src/compaction/picker.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { TableBuilder } from '../../src/sstable/table-builder.js';
import { tableFileName } from '../../src/version/filenames.js';
import { emptyVersion, VersionBuilder } from '../../src/version/version.js';
import { VersionEdit, type FileMetaData } from '../../src/version/version-edit.js';
import { VersionSet } from '../../src/version/version-set.js';

const te = new TextEncoder();
const ik = (k: string, seq: number): Uint8Array => encodeInternalKey(te.encode(k), seq, ValueType.VALUE);
const KB = 1024;
const options: PickerOptions = { l0CompactionTrigger: 4, maxBytesForLevelBase: 10 * KB, levelMultiplier: 10, maxFileSize: 2 * KB };

const file = (number: number, lo: Uint8Array, hi: Uint8Array, fileSize = 6 * KB): FileMetaData => ({ number, fileSize, smallest: lo, largest: hi });

describe('the picker takes boundary files along', () => {
  // L1: [a@9 .. k@5] [k@3 .. k@2] [k@1 .. p@8] [q@1 .. z@1]: key k spans three files.
  const l1 = [file(1, ik('a', 9), ik('k', 5)), file(2, ik('k', 3), ik('k', 2)), file(3, ik('k', 1), ik('p', 8)), file(4, ik('q', 1), ik('z', 1))];
  const edit = new VersionEdit();
  for (const f of l1) edit.addFile(1, f);
  const builder = new VersionBuilder(emptyVersion(1));
  builder.apply(edit);
  const version = builder.build();

  it('a size compaction of the first file also takes every file that continues its last user key', () => {
    const choice = pickCompaction(version, 0, [], options, () => true);
    expect(choice.kind).toBe('merge'); // not a move of file 1 alone, although it is "clean"
    if (choice.kind !== 'merge') return;
    expect(choice.inputs[0].map((f) => f.number)).toEqual([1, 2, 3]);
    expect(Buffer.from(choice.compactPointer)).toEqual(Buffer.from(ik('p', 8)));
  });

  it('a range compaction cut by its size limit does not stop inside a user key', () => {
    const choice = pickRangeCompaction(version, 0, 1, undefined, undefined, { ...options, maxFileSize: 200 }); // limit: 5 KB, one file
    expect(choice.kind).toBe('merge');
    if (choice.kind === 'merge') expect(choice.inputs[0].map((f) => f.number)).toEqual([1, 2, 3]);
  });
});

describe('a LevelDB-style level with a user key split over two files', () => {
  it('compacts without bringing the older version back', async () => {
    const fs = new MemFileSystem();
    await (await DB.open('/db', { fs })).close();
    // Two level-1 tables: `k` = new (seq 5) ends the first, `k` = old (seq 3) starts the second.
    const write = (number: number, entries: [string, number, string][]): FileMetaData => {
      const out = fs.createWritable(tableFileName('/db', number));
      const b = new TableBuilder(out, { compression: CompressionType.NONE });
      for (const [k, seq, v] of entries) b.add(ik(k, seq), te.encode(v));
      b.finish();
      out.sync();
      out.close();
      return file(number, b.smallestKey!.slice(), b.largestKey!.slice(), b.fileSize);
    };
    const pad = 'x'.repeat(600);
    const f1 = write(100, [['a', 1, pad], ['b', 2, pad], ['k', 5, 'new']]);
    const f2 = write(101, [['k', 3, 'old'], ['p', 4, pad]]);
    const versions = new VersionSet('/db', fs, 1);
    versions.recover();
    versions.markFileNumberUsed(101);
    versions.lastSequence = 5;
    versions.logAndApply(new VersionEdit().addFile(1, f1).addFile(1, f2));
    versions.close();

    // Level 1 over its (tiny) target: a size compaction picks file 100 first.
    const db = await DB.open('/db', { fs, maxBytesForLevelBase: 1024 });
    try {
      expect((await db.get('k'))?.toString()).toBe('new');
      // The merge starts once the reads pause (deferMergesDuringReads), within a few timer turns.
      for (let i = 0; i < 500 && db.getProperty('sievekv.num-files-at-level1') !== '0'; i++) await new Promise((r) => setTimeout(r, 10));
      expect(db.getProperty('sievekv.num-files-at-level1')).toBe('0');
      expect((await db.get('k'))?.toString()).toBe('new');
      const keys: string[] = [];
      for await (const [k, v] of db.iterator()) keys.push(`${k.toString()}=${v.toString().slice(0, 3)}`);
      expect(keys).toEqual(['a=xxx', 'b=xxx', 'k=new', 'p=xxx']);
    } finally {
      await db.close();
    }
  });
});
