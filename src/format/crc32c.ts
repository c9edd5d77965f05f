/**
 * CRC-32C (Castagnoli), as LevelDB's util/crc32c, and LevelDB's checksum masking.
 *
 * `crc32c` computes over `data[start, end)`, optionally extending a previous CRC (`init` is a
 * finished CRC, as LevelDB's `crc32c::Extend`). Long ranges go to native code: sievekv's addon
 * (native/crc32c.c, the CPU's instruction) where it is built and the CPU has the instruction,
 * else @node-rs/crc32; short ranges, where a native call costs more than the bytes, use a
 * table-driven loop here (slicing by 8). All give identical results (tested against each other
 * and published vectors).
 *
 * Masking: a CRC stored next to data that may itself contain CRCs (log records holding table
 * blocks, a block holding a log) is stored masked, so the CRC of a CRC is not trivially
 * predictable: rotate right by 15 bits, add 0xa282ead8 (mod 2^32). Persisted: never change.
 */
import { createRequire } from 'node:module';
import { nativeAddon } from '../native.js';

/**
 * @node-rs/crc32's crc32c, loaded through `require`: an ES `import` of the package took 33 ms
 * (its CommonJS entry parsed for its exports), against 10 ms, in every process and every worker
 * thread at start-up (compaction/runner.ts).
 */
const nodeRsCrc32c = (createRequire(import.meta.url)('@node-rs/crc32') as typeof import('@node-rs/crc32')).crc32c;

/** The addon's CRC-32C (native/crc32c.c), where it is loaded and the CPU has the instruction. */
const addonCrc32c = nativeAddon?.crc32c;

/** Persisted: the constant LevelDB adds when masking a CRC. Never change. */
export const CRC_MASK_DELTA = 0xa282ead8 as const;

/**
 * Below this many bytes a JS loop (slicing by 8: eight table lookups per 8 bytes) beats a native
 * call. Measured on Node 20 (2-core machine, BENCHMARKS.md session 33): the addon's call costs
 * ~70 ns whatever the length (48 bytes 69 ns against 44 in JS, 96 bytes 75 against 81, 140 bytes,
 * a WAL record of one db_bench put, 85 against 123; a 4 KiB block 220 ns); @node-rs/crc32's
 * ~250 ns (40 bytes 91 ns JS against 249; 600 bytes 482 against 298; a 4 KiB block 850 ns).
 */
const NATIVE_THRESHOLD = addonCrc32c !== undefined ? 96 : 256;

/** TABLES[t][b]: the CRC of byte b followed by t zero bytes (slicing by 8; Intel's, 2006). */
const TABLES = makeTables();
const [T0, T1, T2, T3, T4, T5, T6, T7] = TABLES as [Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array];

function makeTables(): Int32Array[] {
  const tables = Array.from({ length: 8 }, () => new Int32Array(256));
  const t0 = tables[0]!;
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t0[i] = c;
  }
  for (let t = 1; t < 8; t++) {
    const prev = tables[t - 1]!;
    const table = tables[t]!;
    for (let i = 0; i < 256; i++) table[i] = (prev[i]! >>> 8) ^ t0[prev[i]! & 0xff]!;
  }
  return tables;
}

/**
 * The CRC-32C of `data[start, end)` extending `init` (0 for a fresh CRC). Returns an unsigned
 * 32-bit integer. Requires `0 <= start <= end <= data.length`.
 */
export function crc32c(data: Uint8Array, start = 0, end = data.length, init = 0): number {
  if (end - start >= NATIVE_THRESHOLD) {
    if (addonCrc32c !== undefined) return addonCrc32c(data, start, end, init);
    const view = start === 0 && end === data.length ? data : data.subarray(start, end);
    return nodeRsCrc32c(view, init) >>> 0;
  }
  let c = ~init;
  let i = start;
  const whole = start + ((end - start) & ~7);
  for (; i < whole; i += 8) {
    const a = c ^ (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24));
    c =
      T7[a & 0xff]! ^ T6[(a >>> 8) & 0xff]! ^ T5[(a >>> 16) & 0xff]! ^ T4[a >>> 24]! ^
      T3[data[i + 4]!]! ^ T2[data[i + 5]!]! ^ T1[data[i + 6]!]! ^ T0[data[i + 7]!]!;
  }
  for (; i < end; i++) c = T0[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

/** The CRC-32C of one more byte `b` after the data `crc` covers. */
export function crc32cExtendByte(crc: number, b: number): number {
  const c = ~crc;
  return ~(T0[(c ^ b) & 0xff]! ^ (c >>> 8)) >>> 0;
}

/** LevelDB's `crc32c::Mask`: rotate right 15 bits, add `CRC_MASK_DELTA`. */
export function maskCrc(crc: number): number {
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + CRC_MASK_DELTA) >>> 0;
}

/** The inverse of `maskCrc`. */
export function unmaskCrc(masked: number): number {
  const rot = (masked - CRC_MASK_DELTA) >>> 0;
  return ((rot >>> 17) | (rot << 15)) >>> 0;
}
