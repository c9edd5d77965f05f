/**
 * The memory map of table files (native/mmap.c, built by node-gyp at install into
 * build/Release/sievekv_mmap.node): what LevelDB's PosixEnv gives its table reads on 64-bit
 * systems. A point lookup's block read becomes a copy out of the page cache's own pages, where a
 * `pread` cost this machine 1.3 µs of system call (1.6 µs through `fs.readSync`) per block
 * (BENCHMARKS.md, session 32).
 *
 * Loaded once per thread; null where the addon was not built (no compiler at install, another
 * platform) or failed to load: tables are then read with `pread`, as before.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface MmapAddon {
  /** The file's first `length` bytes, mapped read-only (MAP_SHARED, random access advised). Throws on failure. */
  map(fd: number, length: number): ArrayBuffer;
  /** Detaches `buffer` (its views read as empty) and unmaps it; nothing if it was already. */
  unmap(buffer: ArrayBuffer): void;
}

const ADDON = 'build/Release/sievekv_mmap.node';

function load(): MmapAddon | null {
  // From src/fs (tests, tsx) the package root is two levels up; from dist/src/fs, three.
  for (const up of ['../../', '../../../']) {
    const path = fileURLToPath(new URL(up + ADDON, import.meta.url));
    if (!existsSync(path)) continue;
    try {
      return createRequire(import.meta.url)(path) as MmapAddon;
    } catch {
      return null;
    }
  }
  return null;
}

/** The addon, or null where tables are read with `pread` only. */
export const mmapAddon: MmapAddon | null = load();
