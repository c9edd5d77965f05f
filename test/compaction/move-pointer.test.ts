/**
 * Issue 10: a trivial move is the level's turn as a merge is — it advances the level's compact
 * pointer past the moved file (LevelDB's trivial move records the pointer its picker set), so the
 * level's next compaction starts after it. The picker's choice carries the pointer; the install
 * records it in the MANIFEST.
 */
import { describe, expect, it } from 'vitest';
import { pickCompaction } from '../../src/compaction/picker.js';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { resolveOptions } from '../../src/options.js';
import { VersionEdit } from '../../src/version/version-edit.js';
import { VersionSet } from '../../src/version/version-set.js';

const ik = (key: string, seq: number): Uint8Array => encodeInternalKey(Buffer.from(key), seq, ValueType.VALUE);

describe('a trivial move advances the compact pointer', () => {
  it('the picker’s move names the moved file’s largest key as the level’s next pointer', () => {
    const fs = new MemFileSystem();
    fs.mkdir('/db');
    const versions = new VersionSet('/db', fs, 1);
    versions.createNew();
    versions.recover();
    const file = { number: 7, fileSize: 1000, smallest: ik('b', 5), largest: ik('m', 9) };
    versions.logAndApply(new VersionEdit().addFile(0, file, 0));
    const choice = pickCompaction(versions.current, 0, versions.compactPointers[0]!, resolveOptions({ l0CompactionTrigger: 1 }), () => true);
    expect(choice.kind).toBe('move');
    if (choice.kind !== 'move') return;
    expect(choice.file.number).toBe(7);
    expect(choice.compactPointer).toEqual(file.largest);
    versions.close();
  });

  it('a database that moves a level-0 table records the pointer in its MANIFEST', async () => {
    const fs = new MemFileSystem();
    const db = await DB.open('/db', { fs, l0CompactionTrigger: 1 });
    // One version per key, no deletions: the table is clean, so it is moved, not merged.
    db.batchSync(Array.from({ length: 50 }, (_, i) => ({ type: 'put' as const, key: `k${String(i).padStart(3, '0')}`, value: 'v' })));
    await db.compactRange('~', '~'); // flushes; the compaction it then starts is the move
    expect(db.getProperty('sievekv.num-files-at-level0')).toBe('0');
    expect(db.getProperty('sievekv.num-files-at-level1')).toBe('1');
    await db.close();
    expect(Buffer.from(fs.readFile('/db/LOG')).toString()).toMatch(/moved table \d+ of region 0 from level 0 to 1/);

    const versions = new VersionSet('/db', fs, 1);
    versions.recover();
    const [moved] = versions.current.files(0, 1);
    expect(moved).toBeDefined();
    expect(versions.compactPointers[0]![0]).toEqual(moved!.largest);
    versions.close();
  });
});
