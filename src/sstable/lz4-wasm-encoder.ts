/**
 * An LZ4 block compressor in WebAssembly, assembled here from the listing below (the decoder's
 * twin, lz4-wasm.ts). Used where the native addon is missing (its native/lz4.c is this listing in
 * C and writes the same bytes), for blocks of up to MAX_INPUT bytes (64 KiB): at the default
 * options every block but one holding a value of some 60 KiB or more (a 4 KiB data block, the
 * index block of a 2 MiB table, ~20 KiB); lz4-napi compresses larger ones, and all of them where
 * WebAssembly is missing too.
 *
 * Why: lz4-napi's `compressSync` returns a fresh Buffer per block, allocated by the allocator
 * bundled in its addon (mimalloc) and freed only when V8 collects the Buffer. V8 is not told of
 * that memory, so it piles up between collections and the allocator keeps what it once held:
 * 100,000 calls on a 4 KiB block grew a process by 280 MB that no collection gave back, and a
 * loop over 4 KiB db_bench blocks spent 10.5 µs per block, a quarter of it in the kernel zeroing
 * the allocator's fresh pages. Here a block is compressed into the module's memory, which the
 * caller copies out at once; nothing is allocated.
 *
 * The algorithm is LZ4's fast one (lz4.c, `LZ4_compress_generic` with a table of 16-bit
 * positions for inputs under 64 KiB, acceleration 1): hash the 4 bytes at each position
 * (multiplicative, 12 bits), look the last position of that hash up, and on a 4-byte match
 * extend it backwards over pending literals and forwards; emit the literals and the match as one
 * sequence; after 64 misses in a row, step 2 bytes, then 3... through incompressible runs. The
 * format's end rules hold: the last match starts at least 12 bytes before the end and ends at
 * least 5 before it, so the block ends with literals.
 *
 * Contract of `encode(src, srcEnd, dst)` (addresses in the module's memory): compresses the
 * srcEnd - src bytes at `src` (at most MAX_INPUT) into `dst` and returns the block's length,
 * at most maxCompressedLength(srcEnd - src). It reads up to 8 bytes past `srcEnd` and writes up to
 * 8 past the block's end (copyWords): the regions leave COPY_SLACK bytes after them.
 */
import {
  addTo, BLOCK, BR, BR_IF, constant, COPY_SLACK, copyWords, difference, ELSE, END, get, I32_ADD, I32_CTZ, I32_EQ, I32_GE_U,
  I32_GT_U, I32_LE_U, I32_LOAD, I32_LOAD16_U, I32_LOAD8_U, I32_LT_U, I32_MUL, I32_NE, I32_OR, I32_SHL, I32_SHR_U,
  I32_STORE16, I32_STORE8, I32_SUB, I32_XOR, I64_CONST, I64_STORE, IF, instantiate, LOCAL_TEE, LOOP, moduleBytes, PAGE, set,
  VOID,
} from './wasm-assembly.js';

/** The largest block compressed here: positions in the hash table are 16 bits. */
export const MAX_INPUT = 64 * 1024;

/** LZ4's bound on a block's compressed length (`LZ4_COMPRESSBOUND`). */
export function maxCompressedLength(n: number): number {
  return n + Math.floor(n / 255) + 16;
}

// The module's memory: the hash table (4,096 16-bit positions), the input, then the output with
// room before it for the caller's header.
const TABLE_BYTES = 4096 * 2;
/** Where `lz4Compress` copies its input in the module's memory (exported for the bounds test). */
export const INPUT = TABLE_BYTES;
/** The most bytes a caller may have before the block (lz4Compress's `headerLength`). */
export const MAX_HEADER_LENGTH = 8;
const OUTPUT = INPUT + MAX_INPUT + COPY_SLACK + MAX_HEADER_LENGTH;
const MEMORY_BYTES = OUTPUT + maxCompressedLength(MAX_INPUT) + COPY_SLACK;

/** Knuth's multiplicative hash constant (2654435761) as an i32, LZ4's. */
const HASH_PRIME = -1640531535;
/** A match starts at most this many bytes before the end (LZ4's MFLIMIT). */
const MF_LIMIT = 12;
/** The block's last bytes are literals (LZ4's LASTLITERALS). */
const LAST_LITERALS = 5;

// The function's parameters, then its locals (all i32).
const SRC = 0;
const SRC_END = 1;
const DST = 2;
const IP = 3;
const ANCHOR = 4;
const REF = 5;
const LAST_MATCH_START = 6;
const MATCH_END_LIMIT = 7;
const OP = 8;
const SEQ = 9;
const SLOT = 10;
const STEP = 11;
const LEN = 12;
const TOKEN_AT = 13;
const TOKEN = 14;
const REST = 15;
const FROM = 16;
const COPY_END = 17;
const LIT = 18;
const LOCALS = 16;

/** Writes REST as a length's extra bytes: 255 while at least 255 is left, then the remainder. */
function putLengthBytes(): number[] {
  return [
    BLOCK, VOID,
    LOOP, VOID,
    ...get(REST), ...constant(255), I32_LT_U, BR_IF, 1,
    ...get(OP), ...constant(255), ...I32_STORE8,
    ...addTo(OP, 1),
    ...get(REST), ...constant(255), I32_SUB, ...set(REST),
    BR, 0,
    END,
    END,
    ...get(OP), ...get(REST), ...I32_STORE8,
    ...addTo(OP, 1),
  ];
}

/** The literals' share of a token (into TOKEN, 15 and extra bytes from 15 up) and the literals [ANCHOR, ANCHOR + LIT) copied to OP. */
function literals(): number[] {
  return [
    ...get(OP), ...set(TOKEN_AT),
    ...addTo(OP, 1),
    ...get(LIT), ...constant(15), I32_GE_U,
    IF, VOID,
    ...constant(0xf0), ...set(TOKEN),
    ...get(LIT), ...constant(15), I32_SUB, ...set(REST),
    ...putLengthBytes(),
    ELSE,
    ...get(LIT), ...constant(4), I32_SHL, ...set(TOKEN),
    END,
    // 8 bytes at a time: OP may run up to 8 past the literals' end, then comes back to it.
    ...get(ANCHOR), ...set(FROM),
    ...get(OP), ...get(LIT), I32_ADD, ...set(COPY_END),
    ...copyWords(OP, FROM, COPY_END),
    ...get(COPY_END), ...set(OP),
  ];
}

/** SLOT = the table's byte offset for the 4 bytes at the address on the stack (their value left in SEQ). */
function slotOf(): number[] {
  return [...I32_LOAD, LOCAL_TEE, SEQ, ...constant(HASH_PRIME), I32_MUL, ...constant(20), I32_SHR_U, ...constant(1), I32_SHL, ...set(SLOT)];
}

// prettier-ignore
const ENCODE_BODY = [
  ...get(DST), ...set(OP),
  ...get(SRC), ...set(ANCHOR),
  BLOCK, VOID, // $last: the rest of the input as literals
  ...difference(SRC_END, SRC), ...constant(MF_LIMIT + 1), I32_LT_U, BR_IF, 0,
  // Every table slot at position 0: a slot is only ever a candidate, checked before use.
  ...constant(0), ...set(REST),
  LOOP, VOID,
  ...get(REST), I64_CONST, 0, ...I64_STORE,
  ...get(REST), ...constant(8), I32_ADD, LOCAL_TEE, REST, ...constant(TABLE_BYTES), I32_LT_U, BR_IF, 0,
  END,
  ...get(SRC_END), ...constant(MF_LIMIT), I32_SUB, ...set(LAST_MATCH_START),
  ...get(SRC_END), ...constant(LAST_LITERALS), I32_SUB, ...set(MATCH_END_LIMIT),
  ...get(SRC), ...constant(1), I32_ADD, ...set(IP),
  LOOP, VOID, // $sequence: one literals-and-match sequence per turn ($last at depth 1)
  ...constant(64), ...set(STEP),
  BLOCK, VOID, // $found
  LOOP, VOID, // $search ($found 1, $sequence 2, $last 3)
  ...get(IP), ...get(LAST_MATCH_START), I32_GT_U, BR_IF, 3,
  ...get(IP), ...slotOf(),
  ...get(SRC), ...get(SLOT), ...I32_LOAD16_U, I32_ADD, ...set(REF),
  ...get(SLOT), ...difference(IP, SRC), ...I32_STORE16,
  ...get(REF), ...I32_LOAD, ...get(SEQ), I32_EQ, BR_IF, 1,
  ...get(IP), ...get(STEP), ...constant(6), I32_SHR_U, I32_ADD, ...set(IP),
  ...addTo(STEP, 1),
  BR, 0,
  END,
  END,
  // Backwards over pending literals that match too.
  BLOCK, VOID,
  LOOP, VOID,
  ...get(IP), ...get(ANCHOR), I32_LE_U, BR_IF, 1,
  ...get(REF), ...get(SRC), I32_LE_U, BR_IF, 1,
  ...get(IP), ...constant(1), I32_SUB, ...I32_LOAD8_U, ...get(REF), ...constant(1), I32_SUB, ...I32_LOAD8_U, I32_NE, BR_IF, 1,
  ...addTo(IP, -1),
  ...addTo(REF, -1),
  BR, 0,
  END,
  END,
  // Forwards from the 4 bytes found, up to MATCH_END_LIMIT: 4 bytes at a time (the first that differ
  // counted from their xor's trailing zeros: the loads are little-endian), then byte by byte
  // within the last 4.
  ...constant(4), ...set(LEN),
  BLOCK, VOID, // $extended
  BLOCK, VOID, // $bytes
  LOOP, VOID,
  ...get(IP), ...get(LEN), I32_ADD, ...constant(4), I32_ADD, ...get(MATCH_END_LIMIT), I32_GT_U, BR_IF, 1,
  ...get(IP), ...get(LEN), I32_ADD, ...I32_LOAD, ...get(REF), ...get(LEN), I32_ADD, ...I32_LOAD, I32_XOR, LOCAL_TEE, SEQ,
  IF, VOID,
  ...get(LEN), ...get(SEQ), I32_CTZ, ...constant(3), I32_SHR_U, I32_ADD, ...set(LEN),
  BR, 3,
  END,
  ...addTo(LEN, 4),
  BR, 0,
  END,
  END, // $bytes
  LOOP, VOID,
  ...get(IP), ...get(LEN), I32_ADD, ...get(MATCH_END_LIMIT), I32_GE_U, BR_IF, 1,
  ...get(IP), ...get(LEN), I32_ADD, ...I32_LOAD8_U, ...get(REF), ...get(LEN), I32_ADD, ...I32_LOAD8_U, I32_NE, BR_IF, 1,
  ...addTo(LEN, 1),
  BR, 0,
  END,
  END, // $extended
  // The sequence: token, literals, offset, the match length's extra bytes.
  ...difference(IP, ANCHOR), ...set(LIT),
  ...literals(),
  ...get(OP), ...difference(IP, REF), ...I32_STORE16,
  ...addTo(OP, 2),
  ...get(LEN), ...constant(4), I32_SUB, ...set(REST),
  ...get(REST), ...constant(15), I32_GE_U,
  IF, VOID,
  ...get(TOKEN), ...constant(15), I32_OR, ...set(TOKEN),
  ...get(REST), ...constant(15), I32_SUB, ...set(REST),
  ...putLengthBytes(),
  ELSE,
  ...get(TOKEN), ...get(REST), I32_OR, ...set(TOKEN),
  END,
  ...get(TOKEN_AT), ...get(TOKEN), ...I32_STORE8,
  ...get(IP), ...get(LEN), I32_ADD, LOCAL_TEE, IP, ...set(ANCHOR),
  // The position two back from the match's end goes in the table too (as lz4.c does).
  ...get(IP), ...constant(2), I32_SUB, ...slotOf(),
  ...get(SLOT), ...difference(IP, SRC), ...constant(2), I32_SUB, ...I32_STORE16,
  BR, 0,
  END, // $sequence
  END, // $last
  ...difference(SRC_END, ANCHOR), ...set(LIT),
  ...literals(),
  ...get(TOKEN_AT), ...get(TOKEN), ...I32_STORE8,
  ...difference(OP, DST),
  END,
];

interface Lz4WasmEncoder {
  readonly bytes: Uint8Array;
  encode(src: number, srcEnd: number, dst: number): number;
}

let encoder: Lz4WasmEncoder | null | undefined;

function makeEncoder(): Lz4WasmEncoder | null {
  const module = instantiate<Lz4WasmEncoder['encode']>(moduleBytes(Math.ceil(MEMORY_BYTES / PAGE), 'encode', 3, LOCALS, ENCODE_BODY), 'encode');
  return module === null ? null : { bytes: module.memory, encode: module.fn };
}

/**
 * `raw` compressed as a raw LZ4 block, behind `headerLength` bytes (at most MAX_HEADER_LENGTH)
 * left for the caller to fill (compression.ts writes the block's framing there). A view of the
 * module's memory, valid until this thread's next call; undefined when `raw` is over MAX_INPUT
 * bytes or WebAssembly is missing (the caller then uses lz4-napi).
 */
export function lz4Compress(raw: Uint8Array, headerLength: number): Uint8Array | undefined {
  if (raw.length > MAX_INPUT || !(headerLength >= 0 && headerLength <= MAX_HEADER_LENGTH)) return undefined;
  if (encoder === undefined) encoder = makeEncoder();
  if (encoder === null) return undefined;
  const bytes = encoder.bytes;
  bytes.set(raw, INPUT);
  const n = encoder.encode(INPUT, INPUT + raw.length, OUTPUT);
  return bytes.subarray(OUTPUT - headerLength, OUTPUT + n);
}
