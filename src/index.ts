/**
 * The one public door of sievekv: every export is named here; nothing else is public.
 */
// The database.
export { DB } from './db.js';
export type { BatchOperation, OpenOptions, ReadOptions, WriteOptions } from './db.js';
export type { RepairOptions, RepairReport, RepairProblem } from './db/repair.js';
export type { DestroyOptions, DestroyReport } from './db/destroy.js';
export type { CheckpointOptions, CheckpointProgress, CheckpointReport } from './db/checkpoint.js';
export type { Options, CompressionName, FilterScope, BackgroundPriority } from './options.js';
export type { Snapshot } from './db/snapshot.js';
export type { ChainedBatch } from './db/chained-batch.js';
export type { IteratorOptions } from './db/iterators.js';
export type { ClearOptions } from './db/range-delete.js';
export type { EntryIterator, Entry as IteratorEntry } from './iterator/entry-iterator.js';
export type { IteratorRangeOptions, IteratorBound } from './iterator/iterator-options.js';
export type { FileSystem, WritableFile, RandomAccessFile, FileLock } from './fs/file-system.js';
export type { RegionRouter } from './shard/region-router.js';
export { DezhouRegionRouter } from './shard/dezhou-router.js';
export { JumpRouter } from './shard/jump-router.js';

// Errors.
export { SieveError, ErrorCode, isSieveError } from './errors.js';
export type { SieveErrorDetails } from './errors.js';

// Filters: the seam, the policies, sizing rules from the field.
export type { FilterPolicy, FilterProbe } from './filter/policy.js';
export { BloomFilterPolicy } from './filter/bloom.js';
export {
  BlockedBloomFilterPolicy,
  BLOCKED_BLOOM_FILTER_POLICY_NAME,
  DEFAULT_BLOCKED_BLOOM_BITS_PER_KEY,
  blockedBloomFalsePositiveRate,
} from './filter/blocked-bloom.js';
export {
  RibbonFilterPolicy,
  RIBBON_FILTER_POLICY_NAME,
  DEFAULT_RIBBON_BITS_PER_KEY,
  ribbonFalsePositiveRate,
} from './filter/ribbon.js';
export {
  bloomHashCount,
  optimalNumOfBits,
  optimalNumOfHashFunctions,
  bitsPerKeyForFalsePositiveRate,
  bloomFalsePositiveRate,
  cassandraBloomSpec,
} from './filter/sizing.js';
export type { BloomSpec } from './filter/sizing.js';

// For applications: a standalone Bloom filter and a distinct-key counter.
export { BloomFilter } from './filter/bloom-filter.js';
export type { BloomFilterOptions } from './filter/bloom-filter.js';
export { HyperLogLog } from './filter/hyperloglog.js';

// Hashes.
export { levelDBHash } from './filter/leveldb-hash.js';
export { murmur3_x86_32, murmur3_x64_128, murmur3_x64_128Into } from './filter/murmur3.js';
export { murmur2, murmur2Cassandra } from './filter/murmur2.js';
