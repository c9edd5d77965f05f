/**
 * A data block's point-lookup seek in WebAssembly, over a block the LZ4 decoder of the same module
 * (lz4-wasm.ts) has just written to its memory: the first entry whose internal key (bytewise user
 * key ascending, then the 8-byte trailer descending) is at or after the target, found by a binary
 * search over the restart points and a scan of one restart region, as BlockIterator.seek finds it
 * (block.ts).
 *
 * Why: in JavaScript that seek cost 0.5-0.6 µs of a 6-7 µs `getSync` (db_bench data, bench/db's
 * readrandom), most of it byte loops over keys, which WebAssembly runs several times faster.
 *
 * Contract of `seek(block, size, target, targetLength)` (addresses in the module's memory; the
 * target at TARGET_AT, at most TARGET_MAX bytes): returns
 * - 1: found; SEEK_RESULT_AT holds five i32s: the entry's offset in the block, its key's length,
 *   its value's start and end (offsets in the block), and 1 if its user key is the target's (else
 *   0); the key's bytes are at SEEK_KEY_AT;
 * - 0: every entry sorts before the target;
 * - -1: the block or an entry is not one this seek reads (a restart count or offset out of range,
 *   a malformed varint, a key shorter than a trailer or longer than SEEK_KEY_MAX, a restart entry
 *   that shares bytes, an entry running past the entries, a target shorter than a trailer): the
 *   caller then seeks with BlockIterator, which reports the damage. Nothing outside the block,
 *   the target and the seek's own area is read or written, whatever the bytes.
 */

import {
  addTo, BLOCK, BR, BR_IF, constant, difference, ELSE, END, get, I32_ADD, I32_AND, I32_EQ, I32_GE_S, I32_GE_U, I32_GT_U, I32_LOAD, I32_LOAD8_U,
  I32_LT_S, I32_LT_U, I32_NE, I32_OR, I32_SHL, I32_SHR_U, I32_STORE, I32_STORE8, I32_SUB, I64_GT_U, I64_LOAD, I64_LT_U, IF, LOCAL_TEE, LOOP, RETURN,
  SELECT, set, VOID, type WasmFunction,
} from './wasm-assembly.js';

/** Bytes of a target the seek takes; a longer one is sought by BlockIterator. */
export const TARGET_MAX = 4096;
/** Bytes of an entry's key the seek keeps; a block with a longer key is sought by BlockIterator. */
export const SEEK_KEY_MAX = 4096;
/** The seek's area: the target, then the key being built, then the five result words. */
export const SEEK_AREA_BYTES = TARGET_MAX + SEEK_KEY_MAX + 5 * 4;

/** Where the seek's area lies in a module whose memory reserves it from `areaStart` (4-aligned). */
export function seekLayout(areaStart: number): { targetAt: number; keyAt: number; resultAt: number } {
  return { targetAt: areaStart, keyAt: areaStart + TARGET_MAX, resultAt: areaStart + TARGET_MAX + SEEK_KEY_MAX };
}

// Parameters, then locals (all i32).
const BLK = 0;
const SIZE = 1;
const TARGET = 2;
const TLEN = 3;
const N = 4; // restart points
const LIMIT = 5; // where the entries end (the restart array's address)
const LEFT = 6;
const RIGHT = 7;
const MID = 8;
const P = 9; // the entry's address
const Q = 10; // a cursor
const S = 11; // shared
const NS = 12; // non-shared
const VL = 13; // value length
const KEY = 14; // the key compared: its address
const KLEN = 15; // and length
const I = 16;
const M = 17;
const C = 18; // the comparison: -1, 0, 1
const V = 19; // a varint being read
const B = 20; // a byte
const SH = 21; // a varint's shift
const UEQ = 22; // 1 if the user keys compared equal
const UA = 23; // user key lengths
const UB = 24;
const D = 25; // where the last compared key and the target first differ (-1: not known)
const PREV = 26; // the length of the key before the entry at P
const LOCALS = 23;

/**
 * Reads the varint32 at Q into `into` (Q moves past it): fails (a branch to depth `fail`, counted
 * from where this code is placed) at LIMIT or past 32 bits, as BlockIterator's decodeHeader does.
 * A fifth byte over 0x0f fails, so no varint runs past five bytes.
 */
function varint(into: number, fail: number): number[] {
  return [
    ...constant(0), ...set(V),
    ...constant(0), ...set(SH),
    LOOP, VOID,
    ...get(Q), ...get(LIMIT), I32_GE_U, BR_IF, fail + 1, // truncated
    ...get(Q), ...I32_LOAD8_U, ...set(B),
    ...get(SH), ...constant(28), I32_EQ, ...get(B), ...constant(0x0f), I32_GT_U, I32_AND, BR_IF, fail + 1, // past 32 bits
    ...get(B), ...constant(0x7f), I32_AND, ...get(SH), I32_SHL, ...get(V), I32_OR, ...set(V),
    ...addTo(Q, 1),
    ...addTo(SH, 7),
    ...get(B), ...constant(0x80), I32_AND, BR_IF, 0,
    END,
    ...get(V), ...set(into),
  ];
}

/**
 * Decodes the header of the entry at P (Q ends at its key) and checks that key and value end
 * before LIMIT; fails to depth `fail`.
 */
function header(fail: number): number[] {
  return [
    ...get(P), ...set(Q),
    // Three one-byte varints (db_bench's and most entries), else each read in full.
    ...difference(LIMIT, Q), ...constant(3), I32_GE_U,
    IF, VOID,
    ...get(Q), ...I32_LOAD8_U, ...set(S),
    ...get(Q), ...constant(1), I32_ADD, ...I32_LOAD8_U, ...set(NS),
    ...get(Q), ...constant(2), I32_ADD, ...I32_LOAD8_U, ...set(VL),
    ...get(S), ...get(NS), I32_OR, ...get(VL), I32_OR, ...constant(0x80), I32_LT_U,
    IF, VOID, ...addTo(Q, 3), ELSE, ...slowHeader(fail + 2), END,
    ELSE, ...slowHeader(fail + 1), END,
    ...get(NS), ...difference(LIMIT, Q), I32_GT_U, BR_IF, fail,
    ...get(VL), ...difference(LIMIT, Q), ...get(NS), I32_SUB, I32_GT_U, BR_IF, fail,
  ];
}

function slowHeader(fail: number): number[] {
  return [...varint(S, fail), ...varint(NS, fail), ...varint(VL, fail)];
}

/**
 * C := the internal-key order of the key at KEY (KLEN bytes, >= 8) against the target (TLEN >= 8),
 * the user keys' first I bytes taken as equal: user keys bytewise, then trailers as little-endian
 * u64s, the larger first. UEQ := 1 if the user keys are equal. I ends where the user keys first
 * differ, and M at the shorter user key's length: I < M if they differ in a byte (the scan's D
 * update reads both). Overwrites UA, UB, B and V too.
 */
function compare(): number[] {
  return [
    ...get(KLEN), ...constant(8), I32_SUB, ...set(UA),
    ...get(TLEN), ...constant(8), I32_SUB, ...set(UB),
    ...get(UA), ...get(UB), ...get(UA), ...get(UB), I32_LT_U, SELECT, ...set(M),
    ...constant(0), ...set(UEQ),
    BLOCK, VOID, // done: C is set
    BLOCK, VOID, // the user keys' common part is equal
    LOOP, VOID,
    ...get(I), ...get(M), I32_GE_U, BR_IF, 1,
    ...get(KEY), ...get(I), I32_ADD, ...I32_LOAD8_U, LOCAL_TEE, B,
    ...get(TARGET), ...get(I), I32_ADD, ...I32_LOAD8_U, LOCAL_TEE, V,
    I32_NE,
    IF, VOID,
    ...constant(-1), ...constant(1), ...get(B), ...get(V), I32_LT_U, SELECT, ...set(C),
    BR, 3, // done
    END,
    ...addTo(I, 1),
    BR, 0,
    END,
    END,
    ...get(UA), ...get(UB), I32_NE,
    IF, VOID,
    ...constant(-1), ...constant(1), ...get(UA), ...get(UB), I32_LT_U, SELECT, ...set(C),
    BR, 1, // done
    END,
    ...constant(1), ...set(UEQ),
    ...constant(-1),
    ...constant(1), ...constant(0),
    ...get(KEY), ...get(UA), I32_ADD, ...I64_LOAD, ...get(TARGET), ...get(UB), I32_ADD, ...I64_LOAD, I64_LT_U,
    SELECT,
    ...get(KEY), ...get(UA), I32_ADD, ...I64_LOAD, ...get(TARGET), ...get(UB), I32_ADD, ...I64_LOAD, I64_GT_U,
    SELECT, ...set(C),
    END,
  ];
}

/** The seek's function, its area at `areaStart` (seekLayout). */
export function blockSeekFunction(areaStart: number): WasmFunction {
  const { keyAt, resultAt } = seekLayout(areaStart);
  // prettier-ignore
  const body = [
    BLOCK, VOID, // the fallback block: a branch to it returns -1
    ...get(TLEN), ...constant(8), I32_LT_U, BR_IF, 0,
    ...get(TLEN), ...constant(TARGET_MAX), I32_GT_U, BR_IF, 0,
    ...get(SIZE), ...constant(4), I32_LT_U, BR_IF, 0,
    ...get(BLK), ...get(SIZE), I32_ADD, ...constant(4), I32_SUB, ...I32_LOAD, LOCAL_TEE, N,
    ...constant(0), I32_EQ, BR_IF, 0, // no restart point: BlockIterator's case
    ...get(N), ...get(SIZE), ...constant(4), I32_SUB, ...constant(2), I32_SHR_U, I32_GT_U, BR_IF, 0,
    ...get(BLK), ...get(SIZE), I32_ADD, ...constant(4), I32_SUB, ...get(N), ...constant(2), I32_SHL, I32_SUB, ...set(LIMIT),
    // The binary search: the last restart point whose key sorts before the target (or the first).
    ...constant(0), ...set(LEFT),
    ...get(N), ...constant(1), I32_SUB, ...set(RIGHT),
    BLOCK, VOID,
    LOOP, VOID, // the fallback block is at depth 2 here
    ...get(LEFT), ...get(RIGHT), I32_GE_U, BR_IF, 1,
    ...get(LEFT), ...get(RIGHT), I32_ADD, ...constant(1), I32_ADD, ...constant(1), I32_SHR_U, ...set(MID),
    ...get(LIMIT), ...get(MID), ...constant(2), I32_SHL, I32_ADD, ...I32_LOAD, LOCAL_TEE, P,
    ...get(LIMIT), ...get(BLK), I32_SUB, I32_GE_U, BR_IF, 2, // a restart offset past the entries
    ...get(BLK), ...get(P), I32_ADD, ...set(P),
    ...header(2),
    ...get(S), BR_IF, 2, // a restart entry shares nothing
    ...get(NS), ...constant(8), I32_LT_U, BR_IF, 2,
    ...get(Q), ...set(KEY),
    ...get(NS), ...set(KLEN),
    ...constant(0), ...set(I),
    ...compare(),
    ...get(C), ...constant(0), I32_LT_S,
    IF, VOID,
    ...get(MID), ...set(LEFT),
    ELSE,
    ...get(MID), ...constant(1), I32_SUB, ...set(RIGHT),
    END,
    BR, 0,
    END,
    END,
    // The scan of region LEFT, as BlockIterator's scanToInternalKey: with D where the last key
    // compared (lower) first differs from the target, an entry sharing more than D bytes with the
    // one before sorts lower too and is passed over; one sharing S <= D bytes equals the target up
    // to S and is compared from there. Each key compared is built in the key area from the last one
    // compared and its delta.
    ...get(LIMIT), ...get(LEFT), ...constant(2), I32_SHL, I32_ADD, ...I32_LOAD, LOCAL_TEE, P,
    ...get(LIMIT), ...get(BLK), I32_SUB, I32_GE_U, BR_IF, 0,
    ...get(BLK), ...get(P), I32_ADD, ...set(P),
    ...constant(0), ...set(PREV),
    ...constant(-1), ...set(D),
    ...constant(keyAt), ...set(KEY),
    LOOP, VOID, // the fallback block is at depth 1 here
    ...get(P), ...get(LIMIT), I32_GE_U, IF, VOID, ...constant(0), RETURN, END,
    ...header(1),
    ...get(S), ...get(PREV), I32_GT_U, BR_IF, 1, // shares more than the key before has
    ...get(S), ...get(NS), I32_ADD, LOCAL_TEE, PREV, ...constant(SEEK_KEY_MAX), I32_GT_U, BR_IF, 1,
    ...get(PREV), ...constant(8), I32_LT_U, BR_IF, 1,
    ...constant(0), ...set(I),
    ...get(D), ...constant(0), I32_GE_S,
    IF, VOID,
    // Passed over: shares more than D bytes, and its user key is longer than D.
    ...get(S), ...get(D), I32_GT_U, ...get(D), ...get(PREV), ...constant(8), I32_SUB, I32_LT_U, I32_AND,
    IF, VOID,
    ...get(Q), ...get(NS), I32_ADD, ...get(VL), I32_ADD, ...set(P),
    BR, 2, // the next entry
    END,
    ...get(S), ...get(D), ...get(S), ...get(D), I32_LT_U, SELECT, ...set(I),
    END,
    // The delta after the shared bytes, a byte at a time.
    ...constant(0), ...set(M),
    BLOCK, VOID,
    LOOP, VOID,
    ...get(M), ...get(NS), I32_GE_U, BR_IF, 1,
    ...constant(keyAt), ...get(S), I32_ADD, ...get(M), I32_ADD,
    ...get(Q), ...get(M), I32_ADD, ...I32_LOAD8_U, ...I32_STORE8,
    ...addTo(M, 1),
    BR, 0,
    END,
    END,
    ...get(PREV), ...set(KLEN),
    ...compare(),
    ...get(C), ...constant(0), I32_GE_S,
    IF, VOID,
    ...constant(resultAt), ...get(P), ...get(BLK), I32_SUB, ...I32_STORE,
    ...constant(resultAt + 4), ...get(KLEN), ...I32_STORE,
    ...constant(resultAt + 8), ...get(Q), ...get(NS), I32_ADD, ...get(BLK), I32_SUB, ...I32_STORE,
    ...constant(resultAt + 12), ...get(Q), ...get(NS), I32_ADD, ...get(VL), I32_ADD, ...get(BLK), I32_SUB, ...I32_STORE,
    ...constant(resultAt + 16), ...get(UEQ), ...I32_STORE,
    ...constant(1), RETURN,
    END,
    // Lower: D is where its user key differs from the target's, or unknown when one user key is
    // the other or a prefix of it (the next entry is then compared from its start).
    ...get(I), ...constant(-1), ...get(I), ...get(M), I32_LT_U, SELECT, ...set(D),
    ...get(Q), ...get(NS), I32_ADD, ...get(VL), I32_ADD, ...set(P),
    BR, 0,
    END,
    END, // the fallback block
    ...constant(-1),
    END,
  ];
  return { name: 'seek', params: 4, locals: LOCALS, body };
}
