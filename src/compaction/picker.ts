/**
 * The compaction picker: a pure decision (no I/O) from a version, the compact pointers and the
 * options, after LevelDB's VersionSet::PickCompaction / CompactRange.
 *
 * - Scores: level 0 by file count (count / l0CompactionTrigger: its files overlap, so every read
 *   pays for each one), deeper levels by bytes (bytes / target, target = maxBytesForLevelBase ·
 *   levelMultiplier^(L−1)). The highest score ≥ 1 is compacted; at l0SlowdownTrigger level-0
 *   files, level 0 scores above every other level (writers are waiting for it).
 * - Inputs: at level L the first file past the level's compact pointer (levels take turns over
 *   their key range) and the files that continue its last user key (a LevelDB-made level may
 *   split one key's versions), or all level-0 files overlapping it (level-0 files overlap each
 *   other); every level L+1 file overlapping the result; then level L widened where that adds no
 *   L+1 file.
 * - Grandparents (L+2 files overlapping the inputs) let the merge cut its output early so that no
 *   output overlaps too much of L+2, which would make its own next compaction expensive.
 * - A trivial move — one file down a level without rewriting it — is chosen only when nothing at
 *   L+1 overlaps, the L+2 overlap is small, and the file holds one version per key and no
 *   deletions (its properties say so). LevelDB moves any such file and so carries shadowed
 *   versions to the last level; sievekv rewrites those to drop them.
 */
import type { ResolvedOptions } from '../options.js';
import { compareInternal, compareUserKeys, totalFileSize, type Version } from '../version/version.js';
import { NUM_LEVELS, type FileMetaData } from '../version/version-edit.js';

/** What the picker needs to know of a file beyond its metadata (from its properties block). */
export type FileIsClean = (file: FileMetaData) => boolean;

export type CompactionChoice =
  | { readonly kind: 'none' }
  | {
      readonly kind: 'move';
      readonly region: number;
      readonly level: number;
      readonly file: FileMetaData;
      /** The level's next compact pointer (the file's largest key): a move is the level's turn too. */
      readonly compactPointer: Uint8Array;
    }
  | {
      readonly kind: 'merge';
      readonly region: number;
      /** Inputs come from `level` and `level + 1`; outputs go to `level + 1`. */
      readonly level: number;
      readonly inputs: readonly [readonly FileMetaData[], readonly FileMetaData[]];
      readonly grandparents: readonly FileMetaData[];
      /** The level's next compact pointer (the largest input key at `level`). */
      readonly compactPointer: Uint8Array;
      /** Why: 'size' (score ≥ 1) or 'manual' (compactRange). */
      readonly reason: 'size' | 'manual';
      readonly score: number;
    };

export type PickerOptions = Pick<
  ResolvedOptions,
  'l0CompactionTrigger' | 'maxBytesForLevelBase' | 'levelMultiplier' | 'maxFileSize'
> &
  Partial<Pick<ResolvedOptions, 'l0SlowdownTrigger'>>;

/** Target bytes of level `level` ≥ 1. */
export function maxBytesForLevel(options: PickerOptions, level: number): number {
  let bytes = options.maxBytesForLevelBase;
  for (let l = 1; l < level; l++) bytes *= options.levelMultiplier;
  return bytes;
}

/** LevelDB: widen level L only while the whole compaction stays under 25 output files' worth. */
const EXPANDED_COMPACTION_FACTOR = 25;
/** LevelDB: a move or an output may overlap at most 10 files' worth of the grandparent level. */
export const GRANDPARENT_OVERLAP_FACTOR = 10;

/** Each level's compaction score; index 6 (the last level) is always 0. */
export function levelScores(version: Version, region: number, options: PickerOptions): number[] {
  const scores = new Array<number>(NUM_LEVELS).fill(0);
  scores[0] = version.numFiles(region, 0) / options.l0CompactionTrigger;
  let deeper = 0;
  for (let level = 1; level < NUM_LEVELS - 1; level++) {
    scores[level] = version.levelBytes(region, level) / maxBytesForLevel(options, level);
    deeper = Math.max(deeper, scores[level]!);
  }
  // Writers are slowed down (and soon stopped) until level 0 comes down: it goes first, ahead of
  // a deeper level over its target (RocksDB favours level 0 the same way). The deeper level's
  // turn comes once writers run freely again.
  const slowdown = options.l0SlowdownTrigger;
  if (slowdown !== undefined && version.numFiles(region, 0) >= slowdown && scores[0]! <= deeper) scores[0] = deeper + 1;
  return scores;
}

/** The user-key range [smallest, largest] covered by `files` (internal keys). */
function range(files: readonly FileMetaData[]): [Uint8Array, Uint8Array] {
  let smallest = files[0]!.smallest;
  let largest = files[0]!.largest;
  for (const f of files) {
    if (compareInternal(f.smallest, smallest) < 0) smallest = f.smallest;
    if (compareInternal(f.largest, largest) > 0) largest = f.largest;
  }
  return [smallest, largest];
}

const userKey = (internalKey: Uint8Array): Uint8Array => internalKey.subarray(0, internalKey.length - 8);

/**
 * Adds to `inputs` (files of one sorted level ≥ 1) every following file of `levelFiles` that
 * starts with the user key the inputs end with, repeatedly (LevelDB's AddBoundaryInputs). sievekv
 * never splits a user key's versions over two files of a level, but LevelDB does: compacting the
 * file with the newer versions without its neighbour would leave the older ones above them, where
 * a read finds them first.
 */
function addBoundaryInputs(levelFiles: readonly FileMetaData[], inputs: FileMetaData[]): void {
  if (inputs.length === 0) return;
  let [, largest] = range(inputs);
  for (;;) {
    const next = levelFiles.find((f) => compareInternal(f.smallest, largest) > 0 && compareUserKeys(f.smallest, largest) === 0);
    if (next === undefined || inputs.includes(next)) return;
    inputs.push(next);
    largest = next.largest;
  }
}

/**
 * The next compaction for `region`, or `{ kind: 'none' }`. `compactPointers[level]` is where the
 * level's previous compaction ended.
 */
export function pickCompaction(
  version: Version,
  region: number,
  compactPointers: readonly (Uint8Array | undefined)[],
  options: PickerOptions,
  isClean: FileIsClean = () => false,
): CompactionChoice {
  const scores = levelScores(version, region, options);
  let level = -1;
  let best = 0;
  for (let l = 0; l < NUM_LEVELS - 1; l++) {
    if (scores[l]! >= 1 && scores[l]! > best) {
      best = scores[l]!;
      level = l;
    }
  }
  if (level < 0) return { kind: 'none' };
  const files = version.files(region, level);
  const pointer = compactPointers[level];
  let first = files[0]!;
  if (pointer !== undefined && level > 0) {
    first = files.find((f) => compareInternal(f.largest, pointer) > 0) ?? files[0]!;
  }
  let inputs0: readonly FileMetaData[] = [first];
  if (level === 0) {
    const [lo, hi] = range(inputs0);
    inputs0 = version.overlappingInputs(region, 0, userKey(lo), userKey(hi));
  }
  return setupInputs(version, region, level, inputs0, options, 'size', best, isClean);
}

/**
 * A manual compaction of [begin, end] (user keys; undefined = unbounded) at `level` into
 * `level + 1`, or none if the level holds nothing there. Never a trivial move: compactRange is
 * asked for to reclaim space, and a move reclaims none.
 */
export function pickRangeCompaction(
  version: Version,
  region: number,
  level: number,
  begin: Uint8Array | undefined,
  end: Uint8Array | undefined,
  options: PickerOptions,
): CompactionChoice {
  let inputs = version.overlappingInputs(region, level, begin, end);
  if (inputs.length === 0) return { kind: 'none' };
  if (level > 0) {
    // Bound the work of one step (LevelDB: stop once a compaction's inputs reach its limit).
    const limit = options.maxFileSize * EXPANDED_COMPACTION_FACTOR;
    let total = 0;
    for (let i = 0; i < inputs.length; i++) {
      total += inputs[i]!.fileSize;
      if (total >= limit) {
        inputs = inputs.slice(0, i + 1);
        break;
      }
    }
  }
  return setupInputs(version, region, level, inputs, options, 'manual', 0, () => false);
}

function setupInputs(
  version: Version,
  region: number,
  level: number,
  initial: readonly FileMetaData[],
  options: PickerOptions,
  reason: 'size' | 'manual',
  score: number,
  isClean: FileIsClean,
): CompactionChoice {
  let inputs0 = [...initial];
  if (level > 0) addBoundaryInputs(version.files(region, level), inputs0);
  let [lo, hi] = range(inputs0);
  let inputs1 = version.overlappingInputs(region, level + 1, userKey(lo), userKey(hi));
  if (inputs1.length > 0) {
    // Widen level L as far as it adds no level L+1 file and stays within bounds.
    const [allLo, allHi] = range([...inputs0, ...inputs1]);
    const expanded0 = version.overlappingInputs(region, level, userKey(allLo), userKey(allHi));
    if (expanded0.length > inputs0.length) {
      const expandedBytes = totalFileSize(expanded0) + totalFileSize(inputs1);
      if (expandedBytes < EXPANDED_COMPACTION_FACTOR * options.maxFileSize) {
        const [eLo, eHi] = range(expanded0);
        const expanded1 = version.overlappingInputs(region, level + 1, userKey(eLo), userKey(eHi));
        if (expanded1.length === inputs1.length) {
          inputs0 = expanded0;
          inputs1 = expanded1;
          [lo, hi] = [eLo, eHi];
        }
      }
    }
  }
  const grandparents: FileMetaData[] = [];
  if (level + 2 < NUM_LEVELS) {
    const [gLo, gHi] = inputs1.length > 0 ? range([...inputs0, ...inputs1]) : [lo, hi];
    grandparents.push(...version.overlappingInputs(region, level + 2, userKey(gLo), userKey(gHi)));
  }
  if (
    reason === 'size' &&
    inputs0.length === 1 &&
    inputs1.length === 0 &&
    totalFileSize(grandparents) <= GRANDPARENT_OVERLAP_FACTOR * options.maxFileSize &&
    isClean(inputs0[0]!)
  ) {
    return { kind: 'move', region, level, file: inputs0[0]!, compactPointer: hi };
  }
  return {
    kind: 'merge',
    region,
    level,
    inputs: [inputs0, inputs1],
    grandparents,
    compactPointer: hi,
    reason,
    score,
  };
}
