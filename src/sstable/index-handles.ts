/**
 * Index handles: the block handles of a table's index block, decoded once into numbers, so that a
 * point lookup's index seek (Table.get, through BlockIterator.seekIndexEntry) ends at a number in
 * an array instead of decoding the entry it lands on: its header, its key and its handle's
 * varints, a cache miss or two in a block read by every lookup of the table. Built in memory
 * only, next to the block's restart windows (restart-windows.ts), which find the entry.
 *
 * Only for a block where every restart region is one entry (an index block's restart interval,
 * LevelDB's and ours: 1) and every entry's value starts with two varints of at most seven bytes
 * each (a block handle: offset, size; anything after them ignored, as BlockHandle.decodeFrom
 * ignores it). Any other block has none: its lookups take the ordinary seek, which reports
 * whatever is malformed. Nothing is checked against the file here: Table's block read checks
 * every handle it is given.
 */
import type { Block } from './block.js';

/** Varints longer than this are left to the ordinary path (7 bytes: values below 2^49). */
const MAX_VARINT_BYTES = 7;

/**
 * `[offset0, size0, offset1, size1, …]` for the entries of `block` in order, or null if the block
 * is not one the handles serve (see the header).
 */
export function buildIndexHandles(block: Block): Float64Array | null {
  const n = block.numRestarts;
  if (n === 0) return null;
  const data = block.data;
  const limit = block.restartOffset;
  const handles = new Float64Array(2 * n);
  let p = block.restartPoint(0);
  for (let i = 0; i < n; i++) {
    if (block.restartPoint(i) !== p) return null; // a region of more than one entry, or a gap
    // The entry's header: shared (0 at a restart point), non-shared and value lengths.
    if (p + 3 > limit || data[p] !== 0) return null;
    p++;
    const nonShared = readVarint(data, p, limit);
    if (nonShared < 0) return null;
    p = varintEnd;
    const valueLength = readVarint(data, p, limit);
    if (valueLength < 0) return null;
    const valueStart = varintEnd + nonShared;
    const valueEnd = valueStart + valueLength;
    if (valueEnd > limit) return null;
    const offset = readVarint(data, valueStart, valueEnd);
    if (offset < 0) return null;
    const size = readVarint(data, varintEnd, valueEnd);
    if (size < 0) return null;
    handles[2 * i] = offset;
    handles[2 * i + 1] = size;
    p = valueEnd;
  }
  return p === limit ? handles : null;
}

/** Where the last readVarint's varint ended. */
let varintEnd = 0;

/** The varint at `data[p, limit)` (setting varintEnd), or -1 if it runs past `limit` or MAX_VARINT_BYTES. */
function readVarint(data: Uint8Array, p: number, limit: number): number {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < MAX_VARINT_BYTES; i++) {
    if (p >= limit) return -1;
    const byte = data[p++]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) {
      varintEnd = p;
      return value;
    }
    scale *= 128;
  }
  return -1;
}
