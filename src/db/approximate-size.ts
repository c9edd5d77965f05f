/**
 * `db.approximateSize(start, end)`: the bytes of table files that hold keys in [start, end), as
 * LevelDB's GetApproximateSizes — for each table, the offset where `start` (then `end`) would be
 * found, read from its index block (the data block's handle), summed with the whole size of the
 * tables entirely before the key. What is only in the memtables counts nothing (as in LevelDB),
 * nor do tables past the range; the filter, index and footer of a table count as its last block.
 *
 * Reads the current version (referenced while it works) and the index blocks of the tables whose
 * range holds `start` or `end`, through the table cache: CORRUPTION or IO_ERROR from a table
 * propagate. Additive by construction: size(a, c) = size(a, b) + size(b, c) for a ≤ b ≤ c.
 */
import { compareBytes } from '../format/bytes.js';
import { encodeInternalKey, MAX_SEQUENCE, VALUE_TYPE_FOR_SEEK } from '../format/internal-key.js';
import { NUM_LEVELS } from '../version/version-edit.js';
import { compareInternal, type Version } from '../version/version.js';
import type { DBImpl } from './db-impl.js';
import type { TableAccess } from './table-access.js';

/** Approximate table bytes of the user keys in [start, end); 0 if end ≤ start. */
export function approximateSize(db: DBImpl, start: Uint8Array, end: Uint8Array): number {
  if (compareBytes(start, end) >= 0) return 0;
  // The first internal key of a user key: every version of `start` counts, none of `end`.
  const from = encodeInternalKey(start, MAX_SEQUENCE, VALUE_TYPE_FOR_SEEK);
  const to = encodeInternalKey(end, MAX_SEQUENCE, VALUE_TYPE_FOR_SEEK);
  const version = db.refCurrentVersion();
  try {
    let bytes = 0;
    for (let r = 0; r < db.regions.length; r++) {
      const tables = db.tables[r]!;
      bytes += offsetOf(version, r, tables, to) - offsetOf(version, r, tables, from);
    }
    return bytes;
  } finally {
    version.unref();
  }
}

/** Where `internalKey` would sit in the region's tables laid end to end, level by level. */
function offsetOf(version: Version, region: number, tables: TableAccess, internalKey: Uint8Array): number {
  let offset = 0;
  for (let level = 0; level < NUM_LEVELS; level++) {
    for (const file of version.files(region, level)) {
      if (compareInternal(file.largest, internalKey) <= 0) {
        offset += file.fileSize; // the whole file is before the key
      } else if (compareInternal(file.smallest, internalKey) > 0) {
        if (level > 0) break; // sorted, disjoint: the rest are after it too (level 0 overlaps)
      } else {
        offset += tables.cache.findTable(file.number, file.fileSize).approximateOffsetOf(internalKey);
      }
    }
  }
  return offset;
}
