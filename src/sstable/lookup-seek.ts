/**
 * A point lookup's seek in the data block it has just decoded, where the WebAssembly LZ4 decoder
 * left it (decompressForLookup): done by the module's block seek (block-seek-wasm.ts) over the
 * module's memory, which this file alone reads the layout of. Table.get asks here first and seeks
 * with the block iterator when this declines.
 */
import { TARGET_MAX } from './block-seek-wasm.js';
import { LOOKUP_OUTPUT_START, lz4WasmDecoder } from './lz4-wasm.js';

/** seekLookupBlock's answers: the block iterator is to seek instead; no entry at or after the target; found. */
export const SEEK_DECLINED = -1;
export const SEEK_NONE = 0;
export const SEEK_FOUND = 1;

/**
 * The entry the last SEEK_FOUND found: its key is `bytes[keyStart, keyStart + keyLength)` (the
 * module's memory), its value `[valueStart, valueEnd)` of the block's bytes, `entry` its offset in
 * the block. Valid until the next seek or block decode of this thread.
 */
export class LookupSeekResult {
  bytes: Uint8Array = new Uint8Array(0);
  keyStart = 0;
  keyLength = 0;
  valueStart = 0;
  valueEnd = 0;
  entry = 0;
  /** The entry's user key is the target's. */
  userKeyEqual = false;
}

/** This thread's result of seekLookupBlock (one object, filled again by each seek). */
export const lookupFound = new LookupSeekResult();

/**
 * Seeks the internal key `target` (bytewise user keys) in the block `data[0, size)` if `data` is
 * this thread's decoder's output (a point lookup's block): SEEK_FOUND with the entry in
 * `lookupFound`, or SEEK_NONE; SEEK_DECLINED for a block elsewhere, a target over TARGET_MAX bytes,
 * or a block the seek does not read (block-seek-wasm.ts).
 */
export function seekLookupBlock(data: Uint8Array, size: number, target: Uint8Array): number {
  const wasm = lz4WasmDecoder();
  if (wasm === undefined || data !== wasm.output || target.length > TARGET_MAX) return SEEK_DECLINED;
  wasm.bytes.set(target, wasm.targetAt);
  const answer = wasm.seek(LOOKUP_OUTPUT_START, size, wasm.targetAt, target.length);
  if (answer === SEEK_FOUND) {
    const words = wasm.result; // the entry's offset, key length, value start and end, user key equal
    lookupFound.bytes = wasm.bytes;
    lookupFound.keyStart = wasm.keyAt;
    lookupFound.entry = words[0]!;
    lookupFound.keyLength = words[1]!;
    lookupFound.valueStart = words[2]!;
    lookupFound.valueEnd = words[3]!;
    lookupFound.userKeyEqual = words[4] === 1;
  }
  return answer;
}
