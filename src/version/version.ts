/**
 * Version: one immutable state of the table files — for each region, levels 0..6 of
 * FileMetaData. Level 0 files may overlap and are kept newest first (by file number); every
 * deeper level is sorted by smallest key and its files do not overlap.
 *
 * A Version never changes after `VersionBuilder.build`. Readers (gets in flight, iterators,
 * compactions) `ref()` the version they use and `unref()` when done; the VersionSet keeps a
 * table file while any referenced version names it, so compaction never deletes a file in use.
 */
import { compareByteRanges } from '../format/bytes.js';
import { compareInternalKeys } from '../format/internal-key.js';
import { corruption } from '../errors.js';
import { NUM_LEVELS, type FileMetaData, type VersionEdit } from './version-edit.js';

const TRAILER = 8;

/** Compares a user key with the user-key part of an internal key. */
export function compareUserKeyTo(userKey: Uint8Array, internalKey: Uint8Array): number {
  return compareByteRanges(userKey, 0, userKey.length, internalKey, 0, internalKey.length - TRAILER);
}

/**
 * `compareUserKeyTo` from byte `from` on: for a user key and an internal key known to share their
 * first `from` bytes (Version.comparisonStart).
 */
export function compareUserKeyFrom(userKey: Uint8Array, internalKey: Uint8Array, from: number): number {
  return compareByteRanges(userKey, from, userKey.length, internalKey, from, internalKey.length - TRAILER);
}

/** Version.comparisonStart's answer for a key that sorts before every file bound of a level. */
export const BELOW_LEVEL = -1;
/** Version.comparisonStart's answer for a key that sorts after every file bound of a level. */
export const ABOVE_LEVEL = -2;

/**
 * The length of the prefix every smallest and largest user key of `files` shares (0 for none). A
 * key of a file lies between its bounds, so in bytewise order it starts with that prefix too.
 */
export function sharedPrefixLength(files: readonly FileMetaData[]): number {
  if (files.length === 0) return 0;
  const first = files[0]!.smallest;
  let p = Math.max(0, first.length - TRAILER);
  for (const f of files) {
    p = commonPrefixLength(first, f.smallest, p);
    p = commonPrefixLength(first, f.largest, p);
  }
  return p;
}

function commonPrefixLength(a: Uint8Array, internalKey: Uint8Array, max: number): number {
  const n = Math.min(max, internalKey.length - TRAILER);
  let i = 0;
  while (i < n && a[i] === internalKey[i]) i++;
  return i;
}

/** Compares the user-key parts of two internal keys. */
export function compareUserKeys(a: Uint8Array, b: Uint8Array): number {
  return compareByteRanges(a, 0, a.length - TRAILER, b, 0, b.length - TRAILER);
}

export function compareInternal(a: Uint8Array, b: Uint8Array): number {
  return compareInternalKeys(a, 0, a.length, b, 0, b.length);
}

export function totalFileSize(files: readonly FileMetaData[]): number {
  let sum = 0;
  for (const f of files) sum += f.fileSize;
  return sum;
}

export class Version {
  /** regions[r][level]: that level's files (L0 newest first; deeper levels by smallest key). */
  readonly regions: readonly (readonly FileMetaData[])[][];
  #refs = 0;
  #onRelease: ((v: Version) => void) | undefined;
  /** Per region and level, the length of the prefix all its file bounds share; -1 until asked. */
  #sharedPrefixes: Int32Array[] | undefined;

  constructor(regions: FileMetaData[][][], onRelease?: (v: Version) => void) {
    this.regions = regions;
    this.#onRelease = onRelease;
  }

  get refs(): number {
    return this.#refs;
  }

  ref(): this {
    this.#refs++;
    return this;
  }

  unref(): void {
    if (this.#refs <= 0) throw new Error('Version.unref without a matching ref');
    if (--this.#refs === 0) this.#onRelease?.(this);
  }

  files(region: number, level: number): readonly FileMetaData[] {
    return this.regions[region]![level]!;
  }

  numFiles(region: number, level: number): number {
    return this.regions[region]![level]!.length;
  }

  levelBytes(region: number, level: number): number {
    return totalFileSize(this.regions[region]![level]!);
  }

  /**
   * Where a lookup of `userKey` may start comparing it with the file bounds of (region, level),
   * which must hold a file. Every smallest and largest user key there shares a prefix of p bytes
   * (found once per version and level): a key that has it compares with any bound from byte p on,
   * so the answer is p; a key that does not sorts on the same side of all of them, BELOW_LEVEL or
   * ABOVE_LEVEL, and no file of the level can hold it. db_bench's keys (`%016d` below 10^6) share
   * their first 10 bytes: a lookup's range checks against ten level-0 files compared 20 such
   * prefixes byte by byte, a quarter of a lookup's time for an absent key (BENCHMARKS.md, session 18).
   */
  comparisonStart(region: number, level: number, userKey: Uint8Array): number {
    const files = this.regions[region]![level]!;
    const prefixes = (this.#sharedPrefixes ??= this.regions.map(() => new Int32Array(NUM_LEVELS).fill(-1)))[region]!;
    let p = prefixes[level]!;
    if (p < 0) p = prefixes[level] = sharedPrefixLength(files);
    const bound = files[0]!.smallest;
    const n = p < userKey.length ? p : userKey.length;
    let i = 0;
    while (i < n && userKey[i] === bound[i]) i++;
    if (i === p) return p;
    // A proper prefix of every bound sorts before them all.
    if (i === userKey.length) return BELOW_LEVEL;
    return userKey[i]! < bound[i]! ? BELOW_LEVEL : ABOVE_LEVEL;
  }

  /**
   * Index of the first file in a sorted level (L ≥ 1) whose largest key is ≥ the internal key,
   * or `files.length` (LevelDB's FindFile).
   */
  static findFile(files: readonly FileMetaData[], internalKey: Uint8Array): number {
    let lo = 0;
    let hi = files.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareInternal(files[mid]!.largest, internalKey) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Index of the first file in a sorted level whose largest user key is ≥ `userKey`. `from`: the
   * bytes every bound there shares with `userKey` (comparisonStart), compared no more.
   */
  static findFileByUserKey(files: readonly FileMetaData[], userKey: Uint8Array, from = 0): number {
    let lo = 0;
    let hi = files.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareUserKeyFrom(userKey, files[mid]!.largest, from) > 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Calls `visit` with each file that may hold `userKey`, in the order a lookup must consult them
   * (level 0 newest first, then one file per deeper level), until `visit` returns true.
   */
  forEachCandidate(region: number, userKey: Uint8Array, visit: (file: FileMetaData, level: number) => boolean): void {
    const levels = this.regions[region]!;
    for (let level = 0; level < NUM_LEVELS; level++) {
      const files = levels[level]!;
      if (files.length === 0) continue;
      const from = this.comparisonStart(region, level, userKey);
      if (from < 0) continue;
      if (level === 0) {
        for (const f of files) {
          if (compareUserKeyFrom(userKey, f.smallest, from) >= 0 && compareUserKeyFrom(userKey, f.largest, from) <= 0 && visit(f, 0)) return;
        }
        continue;
      }
      const i = Version.findFileByUserKey(files, userKey, from);
      if (i < files.length && compareUserKeyFrom(userKey, files[i]!.smallest, from) >= 0 && visit(files[i]!, level)) return;
    }
  }

  /**
   * Files of `level` whose user-key range overlaps [begin, end] (undefined = unbounded). For
   * level 0, the range widens to cover every overlapping file's range, transitively, as LevelDB
   * does (an older L0 file must not be compacted without a newer one that overlaps it).
   */
  overlappingInputs(region: number, level: number, begin?: Uint8Array, end?: Uint8Array): FileMetaData[] {
    const files = this.regions[region]![level]!;
    const out: FileMetaData[] = [];
    let lo = begin;
    let hi = end;
    for (let i = 0; i < files.length; i++) {
      const f = files[i]!;
      if (lo !== undefined && compareUserKeyTo(lo, f.largest) > 0) continue;
      if (hi !== undefined && compareUserKeyTo(hi, f.smallest) < 0) continue;
      out.push(f);
      if (level === 0) {
        const fLo = f.smallest.subarray(0, f.smallest.length - TRAILER);
        const fHi = f.largest.subarray(0, f.largest.length - TRAILER);
        let widened = false;
        if (lo !== undefined && compareByteRanges(fLo, 0, fLo.length, lo, 0, lo.length) < 0) {
          lo = fLo;
          widened = true;
        }
        if (hi !== undefined && compareByteRanges(fHi, 0, fHi.length, hi, 0, hi.length) > 0) {
          hi = fHi;
          widened = true;
        }
        if (widened) {
          out.length = 0;
          i = -1;
        }
      }
    }
    return out;
  }

  /** True if any file of `level` overlaps the user-key range [begin, end]. */
  overlapsLevel(region: number, level: number, begin?: Uint8Array, end?: Uint8Array): boolean {
    const files = this.regions[region]![level]!;
    if (level === 0) {
      return files.some(
        (f) => !(begin !== undefined && compareUserKeyTo(begin, f.largest) > 0) && !(end !== undefined && compareUserKeyTo(end, f.smallest) < 0),
      );
    }
    const i = begin === undefined ? 0 : Version.findFileByUserKey(files, begin);
    return i < files.length && !(end !== undefined && compareUserKeyTo(end, files[i]!.smallest) < 0);
  }

  /** Every table file number this version names, in any region. */
  *fileNumbers(): Iterable<number> {
    for (const levels of this.regions) for (const files of levels) for (const f of files) yield f.number;
  }
}

/** Applies VersionEdits to a base version to make the next one (LevelDB's VersionSet::Builder). */
export class VersionBuilder {
  readonly #added: Map<number, FileMetaData>[][];
  readonly #deleted: Set<number>[][];

  constructor(readonly base: Version) {
    this.#added = base.regions.map(() => Array.from({ length: NUM_LEVELS }, () => new Map<number, FileMetaData>()));
    this.#deleted = base.regions.map(() => Array.from({ length: NUM_LEVELS }, () => new Set<number>()));
  }

  apply(edit: VersionEdit, file?: string): void {
    for (const d of edit.deletedFiles) {
      this.#region(d.region, file);
      this.#deleted[d.region]![d.level]!.add(d.number);
      this.#added[d.region]![d.level]!.delete(d.number);
    }
    for (const a of edit.newFiles) {
      this.#region(a.region, file);
      this.#deleted[a.region]![a.level]!.delete(a.file.number);
      this.#added[a.region]![a.level]!.set(a.file.number, a.file);
    }
  }

  #region(region: number, file?: string): void {
    if (region >= this.base.regions.length) throw corruption(`VersionEdit names region ${region}, but the database has ${this.base.regions.length}`, { file });
  }

  /** The new version; checks that levels ≥ 1 do not overlap (CORRUPTION naming `file` if they do). */
  build(onRelease?: (v: Version) => void, file?: string): Version {
    const regions = this.base.regions.map((levels, r) =>
      levels.map((baseFiles, level) => {
        const deleted = this.#deleted[r]![level]!;
        const files = baseFiles.filter((f) => !deleted.has(f.number) && !this.#added[r]![level]!.has(f.number));
        files.push(...this.#added[r]![level]!.values());
        if (level === 0) {
          files.sort((a, b) => b.number - a.number);
        } else {
          files.sort((a, b) => compareInternal(a.smallest, b.smallest) || a.number - b.number);
          for (let i = 1; i < files.length; i++) {
            if (compareInternal(files[i - 1]!.largest, files[i]!.smallest) >= 0) {
              throw corruption(`overlapping files ${files[i - 1]!.number} and ${files[i]!.number} in level ${level}`, { file });
            }
          }
        }
        return files;
      }),
    );
    return new Version(regions, onRelease);
  }
}

/** An empty version with `regions` regions. */
export function emptyVersion(regions: number, onRelease?: (v: Version) => void): Version {
  return new Version(
    Array.from({ length: regions }, () => Array.from({ length: NUM_LEVELS }, () => [])),
    onRelease,
  );
}
