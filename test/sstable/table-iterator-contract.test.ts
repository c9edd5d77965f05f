/**
 * TableIterator (two-level: index → data blocks) against the InternalIterator contract, over
 * tables built with random block sizes (many tiny blocks to one block), restart intervals and
 * compressions, read through a small block cache.
 */
import { iteratorContract } from '../iterator/iterator-contract.js';
import { BlockCache } from '../../src/sstable/block-cache.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { Table } from '../../src/sstable/table.js';
import { TableBuilder } from '../../src/sstable/table-builder.js';
import { newMemFs } from './table-support.js';

const COMPRESSIONS = [CompressionType.NONE, CompressionType.SNAPPY, CompressionType.LZ4] as const;
const BLOCK_SIZES = [1, 32, 128, 4096] as const;

iteratorContract('TableIterator', (entries, random) => {
  const fs = newMemFs();
  const file = fs.createWritable('/db/000001.ldb');
  const builder = new TableBuilder(file, {
    blockSize: BLOCK_SIZES[Math.floor(random() * BLOCK_SIZES.length)],
    blockRestartInterval: 1 + Math.floor(random() * 16),
    compression: COMPRESSIONS[Math.floor(random() * COMPRESSIONS.length)],
  });
  for (const e of entries) builder.add(e.key, e.value);
  builder.finish();
  file.close();
  const table = Table.open(fs, '/db/000001.ldb', { blockCache: new BlockCache(1024) });
  const it = table.newIterator();
  it.onClose = () => table.close();
  return it;
});
