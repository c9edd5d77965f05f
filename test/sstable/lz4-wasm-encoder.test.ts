/**
 * The WebAssembly LZ4 block compressor (src/sstable/lz4-wasm-encoder.ts): what it writes is a
 * well-formed LZ4 block that lz4-napi (the reference decoder here) and our decoder turn back into
 * the input, that keeps the format's end rules (strict decoders, LZ4's own among them, refuse
 * blocks that break them), and that is as small as lz4-napi's. compressBlock uses it for blocks of
 * up to MAX_INPUT bytes and lz4-napi beyond, or where WebAssembly is missing. (RocksDB reading
 * sievekv's LZ4 tables: test/interop/rocksdb-leveldb.test.ts.)
 */
import fc from 'fast-check';
import { compressSync, uncompressSync } from 'lz4-napi';
import { describe, expect, it } from 'vitest';
import { ByteReader } from '../../src/format/varint.js';
import { compressBlock, CompressionType, decompressBlock } from '../../src/sstable/compression.js';
import { lz4CompressFramed, MAX_INPUT, maxCompressedLength } from '../../src/sstable/lz4-wasm-encoder.js';
import { makeValues } from '../../bench/db/workloads.js';
import { runWithoutWebAssembly } from '../support/jitless.js';

/** The raw LZ4 block and the length its varint32 header declares. */
function unframe(framed: Uint8Array): { declared: number; block: Uint8Array } {
  const reader = new ByteReader(framed);
  const declared = reader.varint32();
  return { declared, block: framed.slice(reader.pos) };
}

/** `block` decoded by lz4-napi (which wants a 4-byte little-endian length in front). */
function napiDecode(block: Uint8Array, length: number): Buffer {
  const framed = Buffer.alloc(4 + block.length);
  framed.writeUInt32LE(length, 0);
  framed.set(block, 4);
  return uncompressSync(framed);
}

interface Sequence {
  literalsStart: number;
  literals: number;
  matchStart: number;
  match: number;
}

/** Parses a raw LZ4 block into its sequences (input positions), checking the structure as it goes. */
function sequencesOf(block: Uint8Array): Sequence[] {
  const out: Sequence[] = [];
  let p = 0;
  let pos = 0;
  for (;;) {
    expect(p).toBeLessThan(block.length);
    const token = block[p++]!;
    let literals = token >> 4;
    if (literals === 15) for (let b = 255; b === 255; literals += b) b = block[p++]!;
    const literalsStart = pos;
    p += literals;
    pos += literals;
    if (p === block.length) {
      out.push({ literalsStart, literals, matchStart: pos, match: 0 });
      return out;
    }
    const offset = block[p]! | (block[p + 1]! << 8);
    p += 2;
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThanOrEqual(pos);
    let match = (token & 15) + 4;
    if ((token & 15) === 15) for (let b = 255; b === 255; match += b) b = block[p++]!;
    out.push({ literalsStart, literals, matchStart: pos, match });
    pos += match;
  }
}

/** Data of the kinds blocks hold: runs, a small alphabet, random bytes, db_bench values, or a mix. */
const dataArb = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc.uint8Array({ maxLength: 5000, max: 3 }),
  fc.tuple(fc.nat(255), fc.nat(MAX_INPUT)).map(([b, n]) => new Uint8Array(n).fill(b)),
  fc.tuple(fc.array(fc.uint8Array({ minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 8 }), fc.nat(20_000), fc.integer()).map(([pieces, n, seed]) => {
    const out = new Uint8Array(n);
    let s = seed >>> 0;
    for (let i = 0; i < n; ) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      const piece = pieces[s % pieces.length]!;
      const take = Math.min(piece.length, n - i);
      out.set(piece.subarray(0, take), i);
      i += take;
    }
    return out;
  }),
);

describe('the WebAssembly LZ4 compressor', () => {
  it('writes blocks that lz4-napi and our decoder turn back into the input, within LZ4 bound', () => {
    fc.assert(
      fc.property(dataArb, (data) => {
        const framed = lz4CompressFramed(data);
        expect(framed).toBeDefined();
        const { declared, block } = unframe(framed!);
        expect(declared).toBe(data.length);
        expect(block.length).toBeLessThanOrEqual(maxCompressedLength(data.length));
        expect(napiDecode(block, data.length).equals(data)).toBe(true);
        expect(Buffer.from(decompressBlock(CompressionType.LZ4, framed!.slice())).equals(data)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the end rules: the last match starts 12 bytes or more before the end and ends 5 or more before it', () => {
    fc.assert(
      fc.property(dataArb, (data) => {
        const sequences = sequencesOf(unframe(lz4CompressFramed(data)!).block);
        const last = sequences[sequences.length - 1]!;
        expect(last.match).toBe(0); // the block ends with literals
        expect(last.literalsStart + last.literals).toBe(data.length);
        for (const s of sequences) {
          if (s.match === 0) continue;
          expect(s.matchStart).toBeLessThanOrEqual(data.length - 12);
          expect(s.matchStart + s.match).toBeLessThanOrEqual(data.length - 5);
        }
        if (data.length >= 13) expect(last.literals).toBeGreaterThanOrEqual(5);
      }),
      { numRuns: 300 },
    );
  });

  it('compresses db_bench blocks about as small as lz4-napi', () => {
    const values = makeValues(7);
    let ours = 0;
    let napi = 0;
    for (let b = 0; b < 50; b++) {
      const block = new Uint8Array(4096);
      for (let i = 0; i < block.length; i += 100) block.set(values[(b * 41 + i / 100) % values.length]!.subarray(0, Math.min(100, block.length - i)), i);
      ours += unframe(lz4CompressFramed(block)!).block.length;
      napi += compressSync(Buffer.from(block)).length - 4;
    }
    expect(ours).toBeLessThan(4096 * 50 * 0.7); // half-compressible data does compress
    expect(ours / napi).toBeGreaterThan(0.95);
    expect(ours / napi).toBeLessThan(1.03);
  });

  it('leaves blocks over MAX_INPUT to lz4-napi (compressBlock), whose blocks decode the same', () => {
    const data = new Uint8Array(MAX_INPUT + 1).map((_, i) => (i % 97 < 40 ? (i * 31) & 0xff : 9));
    expect(lz4CompressFramed(data)).toBeUndefined();
    expect(lz4CompressFramed(data.subarray(0, MAX_INPUT))).toBeDefined();
    const stored = compressBlock(CompressionType.LZ4, data);
    expect(Buffer.from(decompressBlock(CompressionType.LZ4, stored)).equals(Buffer.from(data))).toBe(true);
  });

  it("compressBlock's view lasts until the next call: the caller copies it", () => {
    const a = new Uint8Array(2000).fill(1);
    const b = new Uint8Array(3000).map((_, i) => i & 7);
    const first = compressBlock(CompressionType.LZ4, a);
    const kept = first.slice();
    compressBlock(CompressionType.LZ4, b);
    expect(Buffer.from(decompressBlock(CompressionType.LZ4, kept)).equals(Buffer.from(a))).toBe(true);
    expect(Buffer.from(first).equals(Buffer.from(kept))).toBe(false); // overwritten in place
  });

  it('without WebAssembly (node --jitless) lz4-napi compresses, to the same framing', () => {
    const script = [
      "import { lz4CompressFramed } from './src/sstable/lz4-wasm-encoder.ts';",
      "import { compressBlock, decompressBlock } from './src/sstable/compression.ts';",
      'const data = new Uint8Array(5000).map((_, i) => (i % 64 < 32 ? i & 0xff : 7));',
      'const stored = compressBlock(4, data);',
      'const back = decompressBlock(4, stored);',
      "console.log(JSON.stringify({ wasm: lz4CompressFramed(data) !== undefined, header: [stored[0], stored[1]], same: Buffer.from(back).equals(Buffer.from(data)) }));",
    ].join('\n');
    // 5000 as a varint32: 0x88 0x27.
    expect(runWithoutWebAssembly(script)).toEqual({ wasm: false, header: [0x88, 0x27], same: true });
  }, 60_000);
});
