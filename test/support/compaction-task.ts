/**
 * A level-0 merge task for the compaction tests: `upper` (level-0 tables of `dir`) into an empty
 * level 1, no snapshots, no filters, uncompressed 256-byte blocks and 1 KiB outputs unless
 * `overrides` says otherwise.
 */
import type { CompactionTask } from '../../src/compaction/compaction.js';
import { CompressionType } from '../../src/sstable/compression.js';
import type { FileMetaData } from '../../src/version/version-edit.js';

export function levelZeroMerge(dir: string, upper: FileMetaData[], overrides: Partial<CompactionTask> = {}): CompactionTask {
  return {
    dir,
    outputLevel: 1,
    upper,
    upperIsLevel0: true,
    lower: [],
    grandparents: [],
    deeper: [],
    snapshots: [],
    outputNumbers: [100, 101, 102, 103, 104, 105, 106, 107],
    maxFileSize: 1024,
    blockSize: 256,
    blockRestartInterval: 16,
    compression: CompressionType.NONE,
    filterPolicy: null,
    filterScope: 'block',
    verifyChecksums: true,
    ...overrides,
  };
}
