/**
 * Shared helpers of the CLI tests (not a test file): run `main` in-process and collect its
 * output, parse JSON Lines, and put bytes into a MemFileSystem for dumps of damaged copies.
 */
import { readFileSync } from 'node:fs';
import type { FileSystem } from '../../src/fs/file-system.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { type CliIO, main } from '../../src/tools/cli.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `main` in-process on `fs` (the real file system when omitted); `io` adds a progress mode
 * and timing, or a terminal stdout.
 */
export async function runCli(argv: readonly string[], fs?: FileSystem, io?: Omit<CliIO, 'stdout' | 'stderr'>): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const streams: CliIO = {
    ...io,
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
  };
  const code = await main(argv, streams, fs);
  return { code, stdout, stderr };
}

export type JsonLine = Record<string, unknown> & { kind?: string };

export function jsonLines(text: string): JsonLine[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as JsonLine);
}

/** A MemFileSystem holding `files` (path → bytes, or a real file's path to copy). */
export function memFsWith(files: Record<string, Uint8Array | string>): MemFileSystem {
  const fs = new MemFileSystem();
  for (const [path, content] of Object.entries(files)) {
    fs.mkdir(path.slice(0, path.lastIndexOf('/')) || '/');
    const w = fs.createWritable(path);
    w.append(typeof content === 'string' ? readFileSync(content) : content);
    w.sync();
    w.close();
  }
  return fs;
}

/** A copy of `bytes` with the byte at `offset` inverted. */
export function flipped(bytes: Uint8Array, offset: number): Uint8Array {
  const copy = new Uint8Array(bytes);
  copy[offset] = copy[offset]! ^ 0xff;
  return copy;
}
