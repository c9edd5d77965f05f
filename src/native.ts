/**
 * sievekv's native addon (native/*.c, built by node-gyp at install into
 * build/Release/sievekv_native.node): the few calls where a JavaScript or node:fs path costs a
 * point lookup more than the work itself (BENCHMARKS.md, sessions 32-33).
 *
 * - `map`/`unmap`: table files mapped for reads (the `mmapReads` option; src/fs/node-fs.ts).
 * - `pread`: NodeFileSystem's readAt, without node:fs's argument checks around the system call.
 * - `crc32c`: CRC-32C with the CPU's instruction (src/format/crc32c.ts); x86-64 with SSE 4.2
 *   only, absent elsewhere.
 * - `lz4Compress`: the table builder's LZ4 blocks (src/sstable/compression.ts), the algorithm of
 *   the WebAssembly compressor it replaces (the same bytes) without the copies in and out of
 *   the module's memory.
 *
 * Loaded once per thread. Null where the addon was not built (no compiler at install, another
 * platform), failed to load, or the environment sets SIEVEKV_NO_NATIVE=1: then every caller
 * keeps its JavaScript path (node:fs's readSync, @node-rs/crc32 and a table loop, no maps), with
 * the same results.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

export interface NativeAddon {
  /** The file's first `length` bytes, mapped read-only (MAP_SHARED, random access advised). Throws on failure. */
  map(fd: number, length: number): ArrayBuffer;
  /** Detaches `buffer` (its views read as empty) and unmaps it; nothing if it was already. */
  unmap(buffer: ArrayBuffer): void;
  /**
   * Reads `length` bytes at file `position` into `bytes[at, at + length)`, again after short
   * reads; returns how many (fewer only at the end of the file). A failed read throws an Error
   * whose `code` is the errno's name, as node:fs's do.
   */
  pread(fd: number, bytes: Uint8Array, at: number, length: number, position: number): number;
  /** CRC-32C of `bytes[start, end)` extending `init`, unsigned; absent but on x86-64 with SSE 4.2. */
  crc32c?: (bytes: Uint8Array, start: number, end: number, init: number) => number;
  /**
   * Compresses `src[start, end)` (at most 65,536 bytes) as a raw LZ4 block into `dst` from `at`;
   * returns its length. `dst` must hold LZ4's bound for the input from `at` (n + n/255 + 16), apart
   * from the input. Absent from an addon built before it (its callers then take WebAssembly).
   */
  lz4Compress?: (src: Uint8Array, start: number, end: number, dst: Uint8Array, at: number) => number;
}

const ADDON = 'build/Release/sievekv_native.node';

function load(): NativeAddon | null {
  if (process.env.SIEVEKV_NO_NATIVE === '1') return null;
  // From src (tests, tsx) the package root is one level up; from dist/src, two.
  for (const up of ['../', '../../']) {
    const path = fileURLToPath(new URL(up + ADDON, import.meta.url));
    if (!existsSync(path)) continue;
    try {
      return createRequire(import.meta.url)(path) as NativeAddon;
    } catch {
      return null;
    }
  }
  return null;
}

/** The addon, or null where every caller takes its JavaScript path. */
export const nativeAddon: NativeAddon | null = load();
