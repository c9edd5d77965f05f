/**
 * An LZ4 block decoder in WebAssembly, assembled here from the listing below (no binary is
 * shipped and no toolchain is needed; its compressor twin is lz4-wasm-encoder.ts). lz4-napi
 * decodes what this does not take (blocks over WASM_MAX_BYTES, or a Node without WebAssembly).
 *
 * Why: a 4 KiB data block of db_bench data decodes in ~0.5 µs here, where lz4-napi's
 * `uncompressSync` takes 2.5-3 µs, most of it in the fresh Buffer (an off-heap allocation the
 * garbage collector then tracks) it returns for every block; with the GC pressure of a point-read
 * loop, 4.5 µs per block was measured (sievekv.stats blockDecompressMicros).
 *
 * The format is LZ4's raw block (lz4_Block_format.md): sequences of a token (high nibble: literal
 * count, low nibble: match length - 4; 15 means more length bytes follow, each added, until one
 * is not 255), the literals, a 2-byte little-endian match offset (not 0, not before the output's
 * start) and the match's extra length bytes. The last sequence ends after its literals, exactly at
 * the end of the input.
 *
 * Contract of `decode(src, srcEnd, dst, dstEnd)` (addresses in the module's memory): returns the
 * number of bytes written at `dst`, or -1 for input that is not a well-formed block or would write
 * past `dstEnd`. It reads at most 8 bytes past `srcEnd` and writes at most 8 past `dstEnd` (copies
 * go 8 bytes at a time), so callers leave SLACK bytes after both regions; a match whose offset is
 * under 8 overlaps its own output and is copied byte by byte. Every length is checked against the
 * bytes left in both regions before a copy, so no input, however corrupt, reads or writes outside
 * them.
 */

import { blockSeekFunction, SEEK_AREA_BYTES, seekLayout } from './block-seek-wasm.js';
import {
  addTo, BLOCK, BR, BR_IF, constant, COPY_SLACK, copyWords, difference, ELSE, END, get, I32_ADD, I32_AND, I32_EQ, I32_EQZ,
  I32_GE_U, I32_GT_U, I32_LOAD16_U, I32_LOAD8_U, I32_LT_U, I32_SHR_U, I32_STORE8, IF, instantiateModule, LOCAL_TEE, LOOP,
  moduleOfFunctions, PAGE, RETURN, set, VOID,
} from './wasm-assembly.js';

/** Bytes a caller leaves after the input and after the output region (the copies' overrun). */
export const SLACK = COPY_SLACK;

/** Inputs plus outputs up to this size go through the module; larger blocks to lz4-napi. */
export const WASM_MAX_BYTES = 1024 * 1024;

/**
 * Where a point lookup's block is decoded to and read in place (`Lz4WasmDecoder.output`), its
 * compressed bytes before it: blocks of up to half the module's memory each way.
 */
export const LOOKUP_OUTPUT_START = WASM_MAX_BYTES / 2;

// The function's parameters, then its locals (all i32).
const SRC = 0;
const SRC_END = 1;
const DST = 2;
const DST_END = 3;
const TOKEN = 4;
const LEN = 5;
const BYTE = 6;
const FROM = 7;
const DST_START = 8;
const COPY_END = 9;
const OFFSET = 10;
const LOCALS = 7;

/**
 * Adds length bytes to LEN until one is not 255. `fail` is the branch depth of the failure block
 * where this code is placed; inside the loop it is one deeper.
 */
function lengthBytes(fail: number): number[] {
  return [
    LOOP, VOID,
    ...get(SRC), ...get(SRC_END), I32_GE_U, BR_IF, fail + 1, // no byte left
    ...get(SRC), ...I32_LOAD8_U, LOCAL_TEE, BYTE, ...get(LEN), I32_ADD, ...set(LEN),
    ...addTo(SRC, 1),
    ...get(LEN), ...difference(DST_END, DST), I32_GT_U, BR_IF, fail + 1, // longer than the room left
    ...get(BYTE), ...constant(255), I32_EQ, BR_IF, 0,
    END,
  ];
}

// prettier-ignore
const DECODE_BODY = [
  ...get(DST), ...set(DST_START),
  BLOCK, VOID, // the failure block: a branch to it returns -1
  LOOP, VOID, // one sequence per turn; the failure block is at depth 1 here
  // The token and the literal count.
  ...get(SRC), ...get(SRC_END), I32_GE_U, BR_IF, 1,
  ...get(SRC), ...I32_LOAD8_U, LOCAL_TEE, TOKEN, ...constant(4), I32_SHR_U, ...set(LEN),
  ...addTo(SRC, 1),
  ...get(LEN), ...constant(15), I32_EQ, IF, VOID, ...lengthBytes(2), END,
  // The literals: they must lie within the input and fit the output.
  ...get(LEN), ...difference(SRC_END, SRC), I32_GT_U, BR_IF, 1,
  ...get(LEN), ...difference(DST_END, DST), I32_GT_U, BR_IF, 1,
  ...get(DST), ...get(LEN), I32_ADD, ...set(COPY_END),
  ...get(SRC), ...set(FROM),
  ...copyWords(DST, FROM, COPY_END),
  ...get(SRC), ...get(LEN), I32_ADD, ...set(SRC),
  ...get(COPY_END), ...set(DST),
  // The input ends after the last sequence's literals.
  ...get(SRC), ...get(SRC_END), I32_EQ, IF, VOID, ...difference(DST, DST_START), RETURN, END,
  // The match: its offset (2 bytes, not 0, not before the output's start) and its length.
  ...difference(SRC_END, SRC), ...constant(2), I32_LT_U, BR_IF, 1,
  ...get(SRC), ...I32_LOAD16_U, LOCAL_TEE, OFFSET, I32_EQZ, BR_IF, 1,
  ...get(OFFSET), ...difference(DST, DST_START), I32_GT_U, BR_IF, 1,
  ...addTo(SRC, 2),
  ...get(TOKEN), ...constant(15), I32_AND, LOCAL_TEE, LEN, ...constant(15), I32_EQ, IF, VOID, ...lengthBytes(2), END,
  ...get(LEN), ...constant(4), I32_ADD, LOCAL_TEE, LEN, ...difference(DST_END, DST), I32_GT_U, BR_IF, 1,
  ...get(DST), ...get(LEN), I32_ADD, ...set(COPY_END),
  ...difference(DST, OFFSET), ...set(FROM),
  ...get(OFFSET), ...constant(8), I32_GE_U,
  IF, VOID,
  // 8 bytes back or more: each word read is already written.
  ...copyWords(DST, FROM, COPY_END),
  ELSE,
  // Closer: the match repeats its own output, byte by byte.
  LOOP, VOID,
  ...get(DST), ...get(FROM), ...I32_LOAD8_U, ...I32_STORE8,
  ...addTo(FROM, 1),
  ...get(DST), ...constant(1), I32_ADD, LOCAL_TEE, DST, ...get(COPY_END), I32_LT_U, BR_IF, 0,
  END,
  END,
  ...get(COPY_END), ...set(DST),
  BR, 0,
  END, // the sequence loop
  END, // the failure block
  ...constant(-1),
  END,
];

/** Where the block seek's area (block-seek-wasm.ts) starts: past the decoder's regions and their slack. */
const SEEK_AREA_START = WASM_MAX_BYTES + 64;

/**
 * The decoder of this thread: a module instance, its memory and a view of it. The module also
 * holds the seek of a data block a point lookup decoded to `output` (block-seek-wasm.ts; called
 * through lookup-seek.ts).
 */
export interface Lz4WasmDecoder {
  /** The module's memory, at least WASM_MAX_BYTES + 2 * SLACK + 8 bytes. Never grows. */
  readonly bytes: Uint8Array;
  /** `bytes` from LOOKUP_OUTPUT_START to WASM_MAX_BYTES: one view, made once. */
  readonly output: Uint8Array;
  decode(src: number, srcEnd: number, dst: number, dstEnd: number): number;
  /** The block seek (block-seek-wasm.ts); its target goes at `targetAt`, its key is left at `keyAt`. */
  seek(block: number, size: number, target: number, targetLength: number): number;
  readonly targetAt: number;
  readonly keyAt: number;
  /** The seek's five result words, as `bytes` holds them (little-endian i32s). */
  readonly result: Int32Array;
}

let decoder: Lz4WasmDecoder | null | undefined;

/**
 * This thread's decoder, made on first use; `undefined` where WebAssembly is missing (as under
 * `node --jitless`) or refuses the module, and callers then use lz4-napi.
 */
export function lz4WasmDecoder(): Lz4WasmDecoder | undefined {
  if (decoder === undefined) decoder = makeDecoder();
  return decoder ?? undefined;
}

function makeDecoder(): Lz4WasmDecoder | null {
  const pages = Math.ceil((SEEK_AREA_START + SEEK_AREA_BYTES) / PAGE);
  const functions = [{ name: 'decode', params: 4, locals: LOCALS, body: DECODE_BODY }, blockSeekFunction(SEEK_AREA_START)];
  const module = instantiateModule(moduleOfFunctions(pages, functions));
  if (module === null) return null;
  const bytes = module.memory;
  const { targetAt, keyAt, resultAt } = seekLayout(SEEK_AREA_START);
  return {
    bytes,
    output: bytes.subarray(LOOKUP_OUTPUT_START, WASM_MAX_BYTES),
    decode: module.exports.decode as Lz4WasmDecoder['decode'],
    seek: module.exports.seek as Lz4WasmDecoder['seek'],
    targetAt,
    keyAt,
    result: new Int32Array(bytes.buffer, resultAt, 5),
  };
}
