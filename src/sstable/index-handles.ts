/**
 * Index handles: the block handles of a table's index block, decoded once into numbers, so that a
 * point lookup's index seek (Table.get, through BlockIterator.findIndexEntry) ends at a number in
 * an array instead of decoding the entry it lands on: its header, its key and its handle's
 * varints, a cache miss or two in a block read by every lookup of the table. Built in memory
 * only, next to the block's restart windows (restart-windows.ts), which find the entry: 16 bytes
 * an entry, twice the windows' 8.
 *
 * Only for a block where every restart region is one entry (an index block's restart interval,
 * LevelDB's and ours: 1), every entry's header is a one-byte shared length of 0 and two varints,
 * and every value starts with two varints of at most seven bytes (a block handle: offset, size,
 * both below 2^49; anything after them ignored, as BlockHandle.decodeFrom ignores it). Any other
 * block has none: its lookups take the ordinary seek, which reports whatever is malformed. The
 * keys are not looked at (their order and lengths are the windows' to check), and nothing is
 * checked against the file: Table's block read checks every handle it is given.
 */
import type { Block } from './block.js';
import type { BlockHandle } from './footer.js';

/**
 * Point lookups of a block (with its windows built) before its handles are: a table whose index
 * only a filter's false positives reach (absent keys) never pays for them. Building them cold took
 * 7.3 ms over 59 tables' first lookups of absent keys (BENCHMARKS.md, session 33); a table read
 * by present keys reaches this at once.
 */
export const INDEX_HANDLES_AFTER_LOOKUPS = 64;

/** Varints longer than this are left to the ordinary path (7 bytes: values below 2^49). */
const MAX_VARINT_BYTES = 7;

/** An entry header's non-shared key length and value length, as readVarint leaves them. */
const header = new Float64Array(2);

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
    if (p >= limit || data[p] !== 0) return null; // shared: 0 at a restart point, one byte
    p = readVarint(data, p + 1, limit, header, 0);
    if (p < 0) return null;
    p = readVarint(data, p, limit, header, 1);
    if (p < 0) return null;
    const valueStart = p + header[0]!;
    const valueEnd = valueStart + header[1]!;
    if (valueEnd > limit) return null;
    const sizeAt = readVarint(data, valueStart, valueEnd, handles, 2 * i);
    if (sizeAt < 0 || readVarint(data, sizeAt, valueEnd, handles, 2 * i + 1) < 0) return null;
    p = valueEnd;
  }
  return p === limit ? handles : null; // the last region one entry too
}

/** Sets `handle` to entry `entry`'s handle in `handles` (from buildIndexHandles; entry in range). */
export function indexHandleInto(handles: Float64Array, entry: number, handle: BlockHandle): void {
  handle.offset = handles[2 * entry]!;
  handle.size = handles[2 * entry + 1]!;
}

/**
 * Reads the varint at `data[p, limit)` into `into[slot]` and returns where it ends; -1 if it runs
 * past `limit` or past MAX_VARINT_BYTES.
 */
function readVarint(data: Uint8Array, p: number, limit: number, into: Float64Array, slot: number): number {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < MAX_VARINT_BYTES; i++) {
    if (p >= limit) return -1;
    const byte = data[p++]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) {
      into[slot] = value;
      return p;
    }
    scale *= 128;
  }
  return -1;
}
