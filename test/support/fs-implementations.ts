/**
 * Every FileSystem implementation, each made fresh with a directory to work in, for the contract
 * suites that run against all of them (STYLE.md §12): test/fs/file-system-contract.test.ts and
 * test/fs/file-system-link.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileSystem } from '../../src/fs/file-system.js';
import { FaultyFileSystem } from '../../src/fs/faulty-fs.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';

export interface FsSetup {
  fs: FileSystem;
  dir: string;
  cleanup(): void;
}

export const fsImplementations: [string, () => FsSetup][] = [
  [
    'NodeFileSystem',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'sievekv-fs-'));
      return { fs: new NodeFileSystem(), dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
    },
  ],
  [
    'MemFileSystem',
    () => {
      const fs = new MemFileSystem();
      fs.mkdir('/db');
      return { fs, dir: '/db', cleanup: () => {} };
    },
  ],
  [
    'FaultyFileSystem(MemFileSystem) without faults',
    () => {
      const mem = new MemFileSystem();
      mem.mkdir('/db');
      return { fs: new FaultyFileSystem(mem), dir: '/db', cleanup: () => {} };
    },
  ],
];

export const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
export const text = (b: Uint8Array): string => new TextDecoder().decode(b);
