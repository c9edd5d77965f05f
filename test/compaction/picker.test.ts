import { describe, expect, it } from 'vitest';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { levelScores, maxBytesForLevel, pickCompaction, pickRangeCompaction, type PickerOptions } from '../../src/compaction/picker.js';
import { emptyVersion, VersionBuilder, type Version } from '../../src/version/version.js';
import { VersionEdit, type FileMetaData } from '../../src/version/version-edit.js';

const te = new TextEncoder();
const ik = (k: string, seq = 1): Uint8Array => encodeInternalKey(te.encode(k), seq, ValueType.VALUE);
const MB = 1024 * 1024;
const options: PickerOptions = { l0CompactionTrigger: 4, maxBytesForLevelBase: 10 * MB, levelMultiplier: 10, maxFileSize: 2 * MB };

/** A version from a table of files: [level, number, smallest, largest, size]. */
function version(files: [number, number, string, string, number?][]): Version {
  const edit = new VersionEdit();
  for (const [level, number, lo, hi, size] of files) edit.addFile(level, { number, fileSize: size ?? MB, smallest: ik(lo), largest: ik(hi) });
  const b = new VersionBuilder(emptyVersion(1));
  b.apply(edit);
  return b.build();
}

const numbers = (fs: readonly FileMetaData[]): number[] => fs.map((f) => f.number).sort((a, b) => a - b);

describe('pickCompaction', () => {
  const cases: { name: string; files: [number, number, string, string, number?][]; pointers?: (string | undefined)[]; clean?: number[]; expect: unknown }[] = [
    { name: 'nothing to do below the triggers', files: [[0, 1, 'a', 'b'], [0, 2, 'c', 'd'], [1, 3, 'a', 'z']], expect: { kind: 'none' } },
    {
      name: 'four L0 files: all overlapping ones merge with the overlapped L1 files',
      files: [[0, 10, 'a', 'c'], [0, 11, 'b', 'e'], [0, 12, 'x', 'y'], [0, 13, 'd', 'f'], [1, 5, 'a', 'b'], [1, 6, 'e', 'g'], [1, 7, 'h', 'k']],
      // Level 0 is newest first: the first file is 13 (d..f), which overlaps 11 (b..e), which overlaps 10.
      expect: { kind: 'merge', level: 0, upper: [10, 11, 13], lower: [5, 6] },
    },
    {
      name: 'L1 over its target compacts the first file past the compact pointer',
      files: [[1, 1, 'a', 'c', 6 * MB], [1, 2, 'd', 'f', 6 * MB], [2, 3, 'a', 'b'], [2, 4, 'e', 'e']],
      pointers: [undefined, 'c'],
      expect: { kind: 'merge', level: 1, upper: [2], lower: [4] },
    },
    {
      name: 'pointer past the last file wraps to the first',
      files: [[1, 1, 'a', 'c', 6 * MB], [1, 2, 'd', 'f', 6 * MB]],
      pointers: [undefined, 'z'],
      expect: { kind: 'merge', level: 1, upper: [1], lower: [] },
    },
    {
      name: 'a clean file with nothing below moves instead of merging',
      files: [[1, 1, 'a', 'c', 6 * MB], [1, 2, 'd', 'f', 6 * MB]],
      clean: [1],
      expect: { kind: 'move', level: 1, file: 1 },
    },
    {
      name: 'a file holding shadowed versions is rewritten even with nothing below (unlike LevelDB)',
      files: [[1, 1, 'a', 'c', 6 * MB], [1, 2, 'd', 'f', 6 * MB]],
      clean: [],
      expect: { kind: 'merge', level: 1, upper: [1], lower: [] },
    },
    {
      name: 'L1 widens to neighbours that add no L2 file',
      files: [[0, 20, 'b', 'b'], [0, 21, 'b', 'b'], [0, 22, 'b', 'b'], [0, 23, 'b', 'b'], [1, 1, 'a', 'c'], [1, 2, 'd', 'f']],
      expect: { kind: 'merge', level: 0, upper: [20, 21, 22, 23], lower: [1] },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const v = version(c.files);
      const pointers = (c.pointers ?? []).map((p) => (p === undefined ? undefined : ik(p, 0)));
      const clean = new Set(c.clean ?? []);
      const choice = pickCompaction(v, 0, pointers, options, (f) => clean.has(f.number));
      if (choice.kind === 'none') expect(choice).toEqual(c.expect);
      else if (choice.kind === 'move') expect({ kind: 'move', level: choice.level, file: choice.file.number }).toEqual(c.expect);
      else expect({ kind: 'merge', level: choice.level, upper: numbers(choice.inputs[0]), lower: numbers(choice.inputs[1]) }).toEqual(c.expect);
    });
  }

  it('sets the compact pointer to the largest upper input and names the grandparents', () => {
    const v = version([[1, 1, 'a', 'c', 6 * MB], [1, 2, 'd', 'f', 6 * MB], [2, 3, 'b', 'e'], [3, 4, 'a', 'b'], [3, 5, 'x', 'y']]);
    const choice = pickCompaction(v, 0, [], options);
    expect(choice.kind).toBe('merge');
    if (choice.kind !== 'merge') return;
    expect(numbers(choice.inputs[0])).toEqual([1, 2]); // widened: both overlap file 3 only
    expect(numbers(choice.grandparents)).toEqual([4]);
    expect(Buffer.from(choice.compactPointer)).toEqual(Buffer.from(ik('f')));
  });

  it('scores levels by file count (L0) and by bytes against a 10x-growing target', () => {
    const v = version([[0, 1, 'a', 'b'], [0, 2, 'a', 'b'], [1, 3, 'a', 'b', 5 * MB], [2, 4, 'a', 'b', 150 * MB]]);
    expect(levelScores(v, 0, options).slice(0, 3)).toEqual([0.5, 0.5, 1.5]);
    expect(maxBytesForLevel(options, 3)).toBe(1000 * MB);
  });

  it('at l0SlowdownTrigger level-0 files, level 0 goes ahead of a deeper level further over its target', () => {
    // L1 at 4x its target (score 4) and 8 L0 files (score 2): LevelDB would merge L1 first while
    // writers wait on level 0; at the slowdown trigger level 0 comes first.
    const files: [number, number, string, string, number?][] = [[1, 100, 'a', 'z', 40 * MB], [2, 101, 'a', 'z']];
    for (let i = 0; i < 8; i++) files.push([0, 10 + i, 'a', 'z']);
    const v = version(files);
    expect(pickCompaction(v, 0, [], options)).toMatchObject({ kind: 'merge', level: 1 });
    const slowed = { ...options, l0SlowdownTrigger: 8 };
    expect(levelScores(v, 0, slowed)[0]).toBeGreaterThan(levelScores(v, 0, slowed)[1]!);
    expect(pickCompaction(v, 0, [], slowed)).toMatchObject({ kind: 'merge', level: 0 });
    // Below the slowdown trigger the scores decide as before.
    expect(pickCompaction(v, 0, [], { ...options, l0SlowdownTrigger: 9 })).toMatchObject({ kind: 'merge', level: 1 });
  });
});

describe('pickRangeCompaction', () => {
  it('never moves, and selects the files overlapping the range', () => {
    const v = version([[1, 1, 'a', 'c'], [1, 2, 'd', 'f'], [1, 3, 'g', 'i']]);
    const choice = pickRangeCompaction(v, 0, 1, te.encode('e'), te.encode('h'), options);
    expect(choice.kind).toBe('merge');
    if (choice.kind === 'merge') expect(numbers(choice.inputs[0])).toEqual([2, 3]);
    expect(pickRangeCompaction(v, 0, 2, undefined, undefined, options)).toEqual({ kind: 'none' });
  });
});
