/**
 * The database's view of its table files, per region: point lookups and iterators through the
 * region's table cache (open tables) and the database's shared block cache. (Tables are written
 * by the flush and compaction jobs, compaction/jobs.ts.)
 */
import type { FileSystem } from '../fs/file-system.js';
import { KeyProbes } from '../filter/key-probes.js';
import type { FilterPolicy } from '../filter/policy.js';
import { BloomFilterPolicy } from '../filter/bloom.js';
import { RibbonFilterPolicy } from '../filter/ribbon.js';
import { BlockedBloomFilterPolicy, MAY_MATCH, RULED_OUT, SKIP } from '../filter/blocked-bloom.js';
import { VALUE_TYPE_FOR_SEEK, writeInternalKey, INTERNAL_KEY_TRAILER_SIZE } from '../format/internal-key.js';
import type { ResolvedOptions } from '../options.js';
import { BlockCache } from '../sstable/block-cache.js';
import type { ResidentFiles } from '../sstable/resident-files.js';
import { GetStatus, TableGetResult } from '../sstable/table.js';
import { TableCache } from '../sstable/table-cache.js';
import type { TableIteratorOptions } from '../sstable/table-iterator.js';
import type { InternalIterator } from '../iterator/internal-iterator.js';
import type { FileMetaData } from '../version/version-edit.js';
import { BELOW_LEVEL, compareUserKeyFrom, Version } from '../version/version.js';
import type { DBStats } from './stats.js';
import { Level0Filters, LEVEL0_BATCH_MIN_FILES } from './level0-filters.js';

/**
 * The policies a table's filter may have been written by (matched by name): the database's own
 * (whole-table first: a reader prefers that filter) and every built-in one, so tables written under another policy (before a reopen changed it)
 * still skip. Any bits/key reads alike: both Blooms store k in each filter, Ribbon its layout.
 */
export function knownFilterPolicies(...own: (FilterPolicy | null)[]): FilterPolicy[] {
  const policies: FilterPolicy[] = [];
  for (const p of own) if (p !== null && !policies.some((q) => q.name === p.name)) policies.push(p);
  for (const builtIn of [new BloomFilterPolicy(10), new BlockedBloomFilterPolicy(), new RibbonFilterPolicy(10)]) {
    if (!policies.some((p) => p.name === builtIn.name)) policies.push(builtIn);
  }
  return policies;
}

export class TableAccess {
  readonly cache: TableCache;
  readonly #result = new TableGetResult();
  #lookupKey = new Uint8Array(64);
  /** `#lookupKey[0, n)` for the last lookup's n: keys of one length make no view per lookup. */
  #lookupKeyView = this.#lookupKey.subarray(0, 0);
  readonly #stats: DBStats;
  /** Level 0's whole-table filters, asked together by lookups (level0-filters.ts). */
  readonly #level0 = new Level0Filters();

  constructor(fs: FileSystem, dir: string, region: number, options: ResolvedOptions, stats: DBStats, blockCache: BlockCache, residentFiles?: ResidentFiles) {
    this.#stats = stats;
    this.cache = new TableCache(fs, dir, {
      capacity: options.maxOpenFiles,
      filterPolicies: knownFilterPolicies(options.tableFilterPolicy, options.filterPolicy),
      blockCache,
      verifyChecksums: options.verifyChecksums,
      stats: stats.regionTables[region]!,
      mapFiles: options.mmapReads,
      ...(residentFiles !== undefined ? { residentFiles } : {}),
    });
  }

  /**
   * Looks `userKey` up in the version's tables of `region` at `sequence`: level 0 newest first,
   * then one table per level. The key is hashed at most once per filter policy. Returns the value
   * (a view into a cached block; copy it) or undefined.
   */
  getFromVersion(version: Version, region: number, userKey: Uint8Array, sequence: number, probes: KeyProbes): Uint8Array | undefined {
    const need = userKey.length + INTERNAL_KEY_TRAILER_SIZE;
    if (this.#lookupKey.length < need) {
      this.#lookupKey = new Uint8Array(need * 2);
      this.#lookupKeyView = this.#lookupKey.subarray(0, 0);
    }
    writeInternalKey(this.#lookupKey, 0, userKey, sequence, VALUE_TYPE_FOR_SEEK);
    let lookupKey = this.#lookupKeyView;
    if (lookupKey.length !== need) lookupKey = this.#lookupKeyView = this.#lookupKey.subarray(0, need);
    probes.reset(userKey);
    // Level 0 newest first (its files may overlap), then the one file per level that may hold it.
    // Written out rather than through Version.forEachCandidate: no closure per lookup.
    // The range checks compare from the bytes the key shares with every bound of the level.
    const levels = version.regions[region]!;
    const level0 = levels[0]!;
    const from0 = level0.length === 0 ? BELOW_LEVEL : version.comparisonStart(region, 0, userKey);
    if (from0 >= 0) {
      // The files whose range holds the key; with two or more, their filters are asked at once.
      const answers = this.#level0.prepare(level0, this.cache);
      let inRange = 0;
      for (let i = 0; i < level0.length; i++) {
        const file = level0[i]!;
        const holds = compareUserKeyFrom(userKey, file.smallest, from0) >= 0 && compareUserKeyFrom(userKey, file.largest, from0) <= 0;
        answers[i] = holds ? MAY_MATCH : SKIP;
        if (holds) inRange++;
      }
      if (inRange >= LEVEL0_BATCH_MIN_FILES) this.#level0.mayMatch(answers, probes);
      for (let i = 0; i < level0.length; i++) {
        const answer = answers[i]!;
        if (answer === SKIP) continue;
        if (answer === RULED_OUT) {
          this.#stats.filesConsulted++;
          this.#level0.countNegative(i);
          continue;
        }
        if (this.#consult(level0[i]!, lookupKey, userKey, probes) !== GetStatus.NOT_FOUND) return this.#answer();
      }
    }
    for (let level = 1; level < levels.length; level++) {
      const files = levels[level]!;
      if (files.length === 0) continue;
      const from = version.comparisonStart(region, level, userKey);
      if (from < 0) continue;
      const i = Version.findFileByUserKey(files, userKey, from);
      if (i === files.length || compareUserKeyFrom(userKey, files[i]!.smallest, from) < 0) continue;
      if (this.#consult(files[i]!, lookupKey, userKey, probes) !== GetStatus.NOT_FOUND) return this.#answer();
    }
    return undefined;
  }

  #consult(file: FileMetaData, lookupKey: Uint8Array, userKey: Uint8Array, probes: KeyProbes): GetStatus {
    this.#stats.filesConsulted++;
    return this.cache.get(file.number, file.fileSize, lookupKey, userKey, probes, this.#result);
  }

  #answer(): Uint8Array | undefined {
    return this.#result.status === GetStatus.FOUND ? this.#result.value : undefined;
  }

  /** An iterator over `file` (see TableCache.newIterator); `options.recycle` for callers that keep no reference once they close it. */
  newIterator(file: FileMetaData, options?: TableIteratorOptions): InternalIterator {
    return this.cache.newIterator(file.number, file.fileSize, options);
  }

  /** False if `file`'s whole-table filter rules out `probes`' user key (opening the table if needed). */
  fileMayMatch(file: FileMetaData, probes: KeyProbes): boolean {
    return this.cache.findTable(file.number, file.fileSize).fullFilterMayMatch(probes);
  }

  evict(fileNumber: number): void {
    this.#level0.clear(); // holds no table or filter of a file that is going away
    this.cache.evict(fileNumber);
  }

  close(): void {
    this.#level0.clear();
    this.cache.close();
  }
}
