/**
 * sievekv's native addon (native/*.c, src/native.ts), beyond the map (test/sstable/
 * table-mmap.test.ts): its CRC-32C gives what the JavaScript loop and @node-rs/crc32 give, over
 * the stripe lengths where its three streams join; its pread reads exactly, stops at the end of
 * a file, refuses a range outside the array before reading, and fails as node:fs fails (an Error
 * with the errno's code, IO_ERROR through NodeFileSystem); its LZ4 compressor writes the bytes
 * the WebAssembly one writes, which lz4-napi decodes back, and checks its ranges before writing;
 * and with SIEVEKV_NO_NATIVE=1 nothing loads and a database reads and writes through the
 * JavaScript paths alike.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32c as nodeRsCrc32c } from '@node-rs/crc32';
import fc from 'fast-check';
import { uncompressSync } from 'lz4-napi';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode, SieveError } from '../../src/errors.js';
import { crc32cExtendByte } from '../../src/format/crc32c.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import { nativeAddon } from '../../src/native.js';
import { compressBlock, CompressionType } from '../../src/sstable/compression.js';
import { lz4Compress as wasmLz4Compress, maxCompressedLength } from '../../src/sstable/lz4-wasm-encoder.js';

const temp = mkdtempSync(join(tmpdir(), 'sievekv-native-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** The CRC a byte at a time (crc32c.ts's one-table step): the reference. */
function crcByBytes(bytes: Uint8Array, start: number, end: number, init: number): number {
  let c = init;
  for (let i = start; i < end; i++) c = crc32cExtendByte(c, bytes[i]!);
  return c;
}

/** Its CRC-32C is x86-64's (SSE 4.2) only, for now. */
const hasCrc = process.arch === 'x64';

describe('the addon', () => {
  it('is built here, with the CPU’s CRC-32C on x86-64', () => {
    expect(nativeAddon).not.toBeNull();
    expect(typeof nativeAddon!.crc32c).toBe(hasCrc ? 'function' : 'undefined');
  });
});

describe.runIf(hasCrc)('the addon’s crc32c', () => {
  const crc = (bytes: Uint8Array, start: number, end: number, init: number): number => nativeAddon!.crc32c!(bytes, start, end, init);

  it('matches the RFC 3720 vectors', () => {
    expect(crc(new Uint8Array(32), 0, 32, 0)).toBe(0x8a9136aa);
    expect(crc(new Uint8Array(32).fill(0xff), 0, 32, 0)).toBe(0x62a8ab43);
    expect(crc(Buffer.from('123456789'), 0, 9, 0)).toBe(0xe3069283);
    expect(crc(new Uint8Array(0), 0, 0, 0)).toBe(0);
  });

  it('gives what a byte-at-a-time loop and @node-rs/crc32 give, at every offset and at the stripes’ lengths', () => {
    // 3 × 128 and 3 × 1024 bytes are where its streams join; lengths around them and their sums.
    const lengths = fc.oneof(
      fc.nat(700),
      fc.constantFrom(383, 384, 385, 767, 768, 769, 3071, 3072, 3073, 3456, 4096, 4101, 6144, 6528, 9000),
    );
    fc.assert(
      fc.property(lengths, fc.nat(15), fc.nat(15), fc.integer({ min: 0, max: 0xffffffff }), fc.integer(), (length, before, after, init, seed) => {
        const bytes = new Uint8Array(before + length + after);
        let x = seed | 1;
        for (let i = 0; i < bytes.length; i++) bytes[i] = (x = Math.imul(x, 0x2c1b3c6d) + 0x297a2d39) >>> 24;
        const expected = crcByBytes(bytes, before, before + length, init);
        expect(crc(bytes, before, before + length, init)).toBe(expected);
        expect(nodeRsCrc32c(Buffer.from(bytes.subarray(before, before + length)), init) >>> 0).toBe(expected);
      }),
      { numRuns: 400 },
    );
  });

  it('refuses a range outside the array, numbers that are not whole, and what is not a Uint8Array', () => {
    const bytes = new Uint8Array(10);
    const outOfRange = expect.objectContaining({ name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
    const badType = expect.objectContaining({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    expect(() => crc(bytes, 0, 11, 0)).toThrow(outOfRange);
    expect(() => crc(bytes, 6, 5, 0)).toThrow(outOfRange);
    expect(() => crc(bytes, 0, 2 ** 32, 0)).toThrow(outOfRange);
    for (const [start, end, init] of [[-1, 5, 0], [1.5, 5, 0], [0, NaN, 0], [0, 5, 2 ** 32], [0, 5, -1]]) {
      expect(() => crc(bytes, start!, end!, init!)).toThrow(badType);
    }
    expect(() => crc(new Uint16Array(4) as unknown as Uint8Array, 0, 2, 0)).toThrow(badType);
    expect(crc(bytes, 3, 3, 0xffffffff)).toBe(0xffffffff); // nothing to extend by
  });
});

describe('the addon’s pread', () => {
  const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 131 + 7) & 0xff));
  const path = join(temp, 'plain');
  writeFileSync(path, bytes);

  it('reads exactly the range asked, into the place asked, and stops at the end of the file', () => {
    const fd = openSync(path, 'r');
    try {
      fc.assert(
        fc.property(fc.nat(5100), fc.nat(300), fc.nat(40), (position, length, at) => {
          const into = new Uint8Array(at + length + 8).fill(0xee);
          const n = nativeAddon!.pread(fd, into, at, length, position);
          const expected = Math.max(0, Math.min(length, bytes.length - position));
          expect(n).toBe(expected);
          expect(Buffer.compare(into.subarray(at, at + n), bytes.subarray(position, position + n))).toBe(0);
          expect(into.subarray(0, at).every((b) => b === 0xee)).toBe(true);
          expect(into.subarray(at + n).every((b) => b === 0xee)).toBe(true);
        }),
      );
    } finally {
      closeSync(fd);
    }
  });

  it('refuses a range outside the array before reading, and a failed read carries the errno’s code', () => {
    const fd = openSync(path, 'r');
    try {
      const into = new Uint8Array(16);
      const outOfRange = expect.objectContaining({ name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
      const badType = expect.objectContaining({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
      into.fill(9);
      expect(() => nativeAddon!.pread(fd, into, 10, 7, 0)).toThrow(outOfRange);
      expect(() => nativeAddon!.pread(fd, into, 0, 4, 2 ** 53 - 2)).toThrow(outOfRange);
      expect(() => nativeAddon!.pread(fd, into, 0, 4, 2 ** 53)).toThrow(badType);
      expect(() => nativeAddon!.pread(fd, into, -1, 4, 0)).toThrow(badType);
      expect(() => nativeAddon!.pread(fd, into, 0, 4, 0.5)).toThrow(badType);
      expect(() => nativeAddon!.pread(fd, new Float64Array(2) as unknown as Uint8Array, 0, 4, 0)).toThrow(badType);
      expect(into.every((b) => b === 9)).toBe(true); // refused before reading
    } finally {
      closeSync(fd);
    }
    expect(() => nativeAddon!.pread(1 << 30, new Uint8Array(4), 0, 4, 0)).toThrow(expect.objectContaining({ code: 'EBADF' }));
    const dir = openSync(temp, 'r');
    try {
      expect(() => nativeAddon!.pread(dir, new Uint8Array(4), 0, 4, 0)).toThrow(expect.objectContaining({ code: 'EISDIR' }));
    } finally {
      closeSync(dir);
    }
  });

  it('goes on after a short read until the range is in (/proc/kallsyms gives a page or so per read)', () => {
    let expected: Buffer;
    let fd: number;
    try {
      expected = readFileSync('/proc/kallsyms').subarray(0, 64 * 1024);
      fd = openSync('/proc/kallsyms', 'r');
    } catch {
      return; // not Linux: no file here reads short
    }
    try {
      if (expected.length < 64 * 1024) return;
      const into = new Uint8Array(64 * 1024);
      expect(nativeAddon!.pread(fd, into, 0, into.length, 0)).toBe(into.length);
      expect(Buffer.compare(into, expected)).toBe(0);
    } finally {
      closeSync(fd);
    }
  });

  it('is NodeFileSystem’s readAt: IO_ERROR on failure, and no read after close, whatever file the descriptor names by then', () => {
    const file = new NodeFileSystem().openReadable(path);
    const into = new Uint8Array(100);
    expect(file.readAt(into, 0, 100, 4950)).toBe(50);
    expect(Buffer.compare(into.subarray(0, 50), bytes.subarray(4950))).toBe(0);
    file.close();
    const other = openSync(path, 'r'); // most likely takes the closed descriptor's number
    try {
      into.fill(3);
      let caught: unknown;
      try {
        file.readAt(into, 0, 10, 0);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(SieveError);
      expect((caught as SieveError).code).toBe(ErrorCode.IO_ERROR);
      expect((caught as SieveError).message).toMatch(/EBADF/);
      expect(into.every((b) => b === 3)).toBe(true);
    } finally {
      closeSync(other);
    }
  });
});

describe('the addon’s lz4Compress', () => {
  const compress = (src: Uint8Array, start: number, end: number, dst: Uint8Array, at: number): number =>
    nativeAddon!.lz4Compress!(src, start, end, dst, at);
  const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);

  /** Compresses `src[start, end)` with both compressors and checks the same block, which lz4-napi decodes back. */
  function checkAgainstWasm(src: Uint8Array, start: number, end: number, at = 0): void {
    const raw = src.subarray(start, end);
    const dst = new Uint8Array(at + maxCompressedLength(raw.length)).fill(0xee);
    const n = compress(src, start, end, dst, at);
    expect(n).toBeLessThanOrEqual(maxCompressedLength(raw.length));
    expect(dst.subarray(0, at).every((b) => b === 0xee)).toBe(true); // nothing before `at`
    const block = dst.subarray(at, at + n);
    expect(same(block, wasmLz4Compress(raw, 0)!)).toBe(true);
    // lz4-napi reads a raw block behind its 4-byte little-endian length.
    const framed = Buffer.alloc(4 + n);
    framed.writeUInt32LE(raw.length, 0);
    framed.set(block, 4);
    expect(same(raw, uncompressSync(framed))).toBe(true);
  }

  /** Inputs of the kinds a block holds: random bytes, runs, a few symbols, text-like repeats with noise. */
  const inputs = fc.tuple(
    fc.oneof(fc.nat(300), fc.constantFrom(0, 1, 12, 13, 17, 4096, 65535, 65536), fc.integer({ min: 300, max: 65536 })),
    fc.constantFrom('random', 'run', 'few', 'repeats'),
    fc.integer(),
    fc.nat(9),
  ).map(([length, kind, seed, before]) => {
    const bytes = new Uint8Array(before + length + 7);
    let x = seed | 1;
    const next = (): number => (x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6a09e667) >>> 24;
    const phrase = Uint8Array.from({ length: 23 }, next);
    for (let i = 0; i < bytes.length; i++) {
      bytes[i] = kind === 'random' ? next() : kind === 'run' ? 7 : kind === 'few' ? next() & 3 : next() < 40 ? next() : phrase[i % 23]!;
    }
    return { bytes, start: before, end: before + length };
  });

  it('writes the bytes the WebAssembly compressor writes, which lz4-napi decodes to the input', () => {
    fc.assert(
      fc.property(inputs, fc.nat(16), ({ bytes, start, end }, at) => checkAgainstWasm(bytes, start, end, at)),
      { numRuns: 300 },
    );
  });

  it('writes the same bytes at the lengths where a token’s count takes extra bytes (15 + 255k)', () => {
    // Runs make one match of the run's length less a byte or so: match lengths 4 + 15 + 255k and
    // their neighbours. Noise makes literals only: literal counts 15 + 255k.
    for (let n = 13; n <= 1200; n++) {
      checkAgainstWasm(new Uint8Array(n).fill(7), 0, n);
    }
    const noise = Uint8Array.from({ length: 1100 }, (_, i) => (Math.imul(i + 1, 0x9e3779b1) >>> 24) ^ (i & 0xff));
    for (const k of [0, 1, 2, 3]) {
      for (let n = 15 + 255 * k - 3; n <= 15 + 255 * k + 3; n++) checkAgainstWasm(noise, 0, n);
      // Literals, then a run: the sequence's literal count and match length both near the edges.
      const mixed = new Uint8Array(15 + 255 * k + 300);
      mixed.set(noise.subarray(0, 15 + 255 * k));
      mixed.fill(9, 15 + 255 * k);
      for (let n = 15 + 255 * k + 13; n <= mixed.length; n += 7) checkAgainstWasm(mixed, 0, n);
    }
    // A match found at position 1 whose byte before it matches too: the backward extension runs to
    // the input's first byte. The search starts at 1 and finds position 0 itself unless it steps
    // over it: after 64 misses it moves 2 bytes at a time, so long gaps of noise land past it.
    for (let gap = 60; gap < 200; gap++) {
      const head = [0x78, ...noise.subarray(0, 12)];
      const input = Uint8Array.from([...head, ...noise.subarray(100, 100 + gap), ...head, ...noise.subarray(200, 220)]);
      checkAgainstWasm(input, 0, input.length);
    }
  });

  it('is what compressBlock uses for LZ4 blocks: its block behind their framing, not in the WebAssembly module’s memory', () => {
    const raw = new TextEncoder().encode('sievekv '.repeat(600));
    const dst = new Uint8Array(maxCompressedLength(raw.length));
    const n = compress(raw, 0, raw.length, dst, 0);
    const framed = compressBlock(CompressionType.LZ4, raw);
    expect(same(framed.subarray(2), dst.subarray(0, n))).toBe(true); // 4,800 takes a 2-byte varint
    const wasmMemory = wasmLz4Compress(raw, 0)!.buffer;
    expect(compressBlock(CompressionType.LZ4, raw).buffer).not.toBe(wasmMemory);
  });

  it('refuses a range outside the source, over 64 KiB, or too little room, before writing', () => {
    const src = new Uint8Array(70_000);
    const dst = new Uint8Array(100).fill(0xee);
    const outOfRange = expect.objectContaining({ name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
    const badType = expect.objectContaining({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    expect(() => compress(src, 0, 65_537, new Uint8Array(70_000), 0)).toThrow(outOfRange);
    expect(() => compress(src, 10, 9, dst, 0)).toThrow(outOfRange);
    expect(() => compress(src, 69_990, 70_001, dst, 0)).toThrow(outOfRange);
    // 84 bytes need 84 + 0 + 16 = 100: fits at 0, not at 1.
    expect(() => compress(src, 0, 84, dst, 1)).toThrow(outOfRange);
    expect(() => compress(src, 0, 84, dst, 101)).toThrow(outOfRange);
    expect(dst.every((b) => b === 0xee)).toBe(true);
    expect(compress(src, 0, 84, dst, 0)).toBeGreaterThan(0);
    for (const [start, end, at] of [[-1, 5, 0], [0.5, 5, 0], [0, 5, NaN]]) {
      expect(() => compress(src, start!, end!, dst, at!)).toThrow(badType);
    }
    expect(() => compress(new Uint16Array(4) as unknown as Uint8Array, 0, 2, dst, 0)).toThrow(badType);
    // Views of one buffer: the block may not overlap the input it reads.
    const shared = new Uint8Array(1000).fill(3);
    expect(() => compress(shared, 0, 100, shared, 50)).toThrow(outOfRange);
    expect(() => compress(shared, 500, 600, shared, 400)).toThrow(outOfRange); // its bound, 116 bytes, reaches the input
    expect(shared.every((b) => b === 3)).toBe(true);
    expect(compress(shared, 500, 600, shared, 0)).toBeGreaterThan(0);
    expect(compress(shared, 0, 0, shared, 0)).toBe(1); // nothing to read: a token alone
  });
});

describe('without the addon (SIEVEKV_NO_NATIVE=1)', () => {
  it('loads nothing, and a database writes, reopens and reads through the JavaScript paths', () => {
    const dir = join(temp, 'db');
    const script = `
      const { nativeAddon } = await import('./src/native.ts');
      const { DB } = await import('./src/db.ts');
      const db = await DB.open(${JSON.stringify(dir)}, { mmapReads: true, writeBufferSize: 64 * 1024 });
      for (let i = 0; i < 5000; i++) db.putSync('k' + String(i).padStart(5, '0'), 'v'.repeat(i % 300));
      await db.compactRange();
      await db.close();
      const again = await DB.open(${JSON.stringify(dir)}, { mmapReads: true });
      let same = 0;
      for (let i = 0; i < 5000; i++) if (again.getSync('k' + String(i).padStart(5, '0'))?.toString() === 'v'.repeat(i % 300)) same++;
      const tables = Number(again.getProperty('sievekv.num-files-at-level1')) + Number(again.getProperty('sievekv.num-files-at-level2'));
      await again.close();
      console.log(JSON.stringify({ addon: nativeAddon, same, tables }));`;
    const result = runWithoutAddon(script) as { addon: unknown; same: number; tables: number };
    expect(result).toEqual({ addon: null, same: 5000, tables: expect.any(Number) });
    expect(result.tables).toBeGreaterThan(0);
  });

  it('CRC-32C takes @node-rs/crc32 from 256 bytes and its own loop below, and both give the byte loop’s CRC', () => {
    const script = `
      const { crc32c, crc32cExtendByte } = await import('./src/format/crc32c.ts');
      let bad = 0, checked = 0, x = 12345;
      for (const length of [0, 1, 7, 95, 96, 255, 256, 257, 600, 4096, 4101]) {
        for (let round = 0; round < 8; round++) {
          const bytes = new Uint8Array(length + 9);
          for (let i = 0; i < bytes.length; i++) bytes[i] = (x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 24;
          const init = (x = (Math.imul(x, 1103515245) + 12345) >>> 0);
          const start = round;
          let c = init;
          for (let i = start; i < start + length; i++) c = crc32cExtendByte(c, bytes[i]);
          if (crc32c(bytes, start, start + length, init) !== c) bad++;
          checked++;
        }
      }
      console.log(JSON.stringify({ bad, checked }));`;
    expect(runWithoutAddon(script)).toEqual({ bad: 0, checked: 88 });
  });
});

/** Runs a TypeScript module snippet (from the repository's root) in a child with SIEVEKV_NO_NATIVE=1; its last line of output, parsed. */
function runWithoutAddon(script: string): unknown {
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    cwd: new URL('../..', import.meta.url).pathname,
    env: { ...process.env, SIEVEKV_NO_NATIVE: '1' },
  });
  expect({ status: child.status, stderr: child.status === 0 ? '' : child.stderr }).toEqual({ status: 0, stderr: '' });
  return JSON.parse(child.stdout.trim().split('\n').pop()!);
}
