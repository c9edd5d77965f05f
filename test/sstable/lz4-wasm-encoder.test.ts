/**
 * The WebAssembly LZ4 block compressor (src/sstable/lz4-wasm-encoder.ts), called itself: what it
 * writes is a well-formed LZ4 block that lz4-napi (the reference decoder here) and our decoder
 * turn back into the input, keeps the format's end rules (strict decoders, LZ4's own among them,
 * refuse blocks that break them), stays within LZ4's bound and its memory regions, and is as
 * small as lz4-napi's. compressBlock uses it for blocks of up to MAX_INPUT bytes where the native
 * addon is missing (the addon's compressor writes the same bytes: test/native/addon.test.ts), and
 * lz4-napi beyond. (RocksDB reading sievekv's LZ4 tables: test/interop/rocksdb-leveldb.test.ts.)
 */
import fc from 'fast-check';
import { compressSync, uncompressSync } from 'lz4-napi';
import { describe, expect, it } from 'vitest';
import { ByteReader, putVarint32, varint32Length } from '../../src/format/varint.js';
import { compressBlock, CompressionType, decompressBlock } from '../../src/sstable/compression.js';
import { INPUT, lz4Compress, MAX_INPUT, maxCompressedLength } from '../../src/sstable/lz4-wasm-encoder.js';
import { COPY_SLACK } from '../../src/sstable/wasm-assembly.js';
import { runWithoutWebAssembly } from '../support/jitless.js';

/** The LZ4 block of a stored (framed) LZ4 block and the length its varint32 header declares. */
function unframe(stored: Uint8Array): { declared: number; block: Uint8Array } {
  const reader = new ByteReader(stored);
  const declared = reader.varint32();
  return { declared, block: stored.slice(reader.pos) };
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
  offset: number;
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
      out.push({ literalsStart, literals, matchStart: pos, match: 0, offset: 0 });
      return out;
    }
    const offset = block[p]! | (block[p + 1]! << 8);
    p += 2;
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThanOrEqual(pos);
    let match = (token & 15) + 4;
    if ((token & 15) === 15) for (let b = 255; b === 255; match += b) b = block[p++]!;
    out.push({ literalsStart, literals, matchStart: pos, match, offset });
    pos += match;
  }
}

/** `data` (at most MAX_INPUT bytes) compressed by the WebAssembly compressor, framed as compressBlock frames it. */
function wasmStored(data: Uint8Array): Uint8Array {
  const headerLength = varint32Length(data.length);
  const stored = lz4Compress(data, headerLength)!.slice();
  putVarint32(stored, 0, data.length);
  return stored;
}

/** Compresses `data` (at most MAX_INPUT bytes), checks the block decodes back both ways, and returns its sequences. */
function roundTrip(data: Uint8Array): Sequence[] {
  const stored = wasmStored(data);
  const { declared, block } = unframe(stored);
  expect(declared).toBe(data.length);
  expect(block.length).toBeLessThanOrEqual(maxCompressedLength(data.length));
  expect(napiDecode(block, data.length).equals(data)).toBe(true);
  expect(Buffer.from(decompressBlock(CompressionType.LZ4, stored)).equals(data)).toBe(true);
  return sequencesOf(block);
}

function random(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    out[i] = s >>> 24;
  }
  return out;
}

/** Data of the kinds blocks hold: short random, a small alphabet, runs, or pieces repeated. */
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
        roundTrip(data);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the end rules: the last match starts 12 bytes or more before the end and ends 5 or more before it', () => {
    fc.assert(
      fc.property(dataArb, (data) => {
        const sequences = roundTrip(data);
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

  it('takes the hard cases at MAX_INPUT: incompressible, offsets past 32 KiB and up to the 16-bit limit', () => {
    // Random: the block expands, up to LZ4's bound.
    const noise = random(MAX_INPUT, 1);
    expect(roundTrip(noise).filter((s) => s.match > 0)).toEqual([]);
    // A random half, then the same half: one match 32,768 bytes back (the offset's high bit set).
    const halves = new Uint8Array(MAX_INPUT);
    halves.set(random(MAX_INPUT / 2, 2));
    halves.copyWithin(MAX_INPUT / 2, 0, MAX_INPUT / 2);
    expect(roundTrip(halves).some((s) => s.offset === MAX_INPUT / 2 && s.match > 1000)).toBe(true);
    // Random bytes, zeros (their one 4-byte sequence takes one table slot), the random bytes again
    // near the end: a match as far back as 16 bits hold.
    const far = new Uint8Array(MAX_INPUT);
    far.set(random(24, 3));
    far.copyWithin(MAX_INPUT - 40, 0, 24);
    expect(Math.max(...roundTrip(far).map((s) => s.offset))).toBeGreaterThan(65_000);
  });

  it('writes nothing outside its hash table, its input, and its block with the copies\' overrun', () => {
    const CANARY = 0xff;
    for (const [n, seed] of [[0, 4], [13, 5], [4096, 6], [MAX_INPUT, 7]] as const) {
      const data = random(n, seed).map((b) => b % 255); // never the canary
      for (let i = 0; i < n; i += 64) data.copyWithin(i + 32, i, i + 16); // some matches
      const first = lz4Compress(new Uint8Array(1), 0)!; // the module's memory, as a view's buffer
      const memory = new Uint8Array(first.buffer);
      memory.fill(CANARY);
      // The input's region past the input holds another byte: a read of it copied out shows.
      memory.fill(0xfe, INPUT + n, INPUT + MAX_INPUT + COPY_SLACK);
      const block = lz4Compress(data, 0)!;
      const blockStart = block.byteOffset;
      const blockEnd = blockStart + block.length;
      const changed: number[] = [];
      for (let i = INPUT + MAX_INPUT + COPY_SLACK; i < memory.length; i++) {
        const inBlock = i >= blockStart && i < blockEnd + COPY_SLACK / 2; // at most 8 past its end
        if (memory[i] !== CANARY && !inBlock) changed.push(i);
      }
      for (let i = INPUT + n; i < INPUT + MAX_INPUT + COPY_SLACK; i++) if (memory[i] !== 0xfe) changed.push(i);
      expect(changed).toEqual([]);
      expect(blockStart).toBeGreaterThanOrEqual(INPUT + MAX_INPUT + COPY_SLACK); // the input's slack is left alone
      expect(napiDecode(block.slice(), n).equals(data)).toBe(true);
    }
  });

  it('compresses blocks like db_bench\'s (half-compressible values) about as small as lz4-napi', () => {
    let ours = 0;
    let napi = 0;
    for (let b = 0; b < 50; b++) {
      // db_bench's values: a random half, then the same again; between them 16-byte keys.
      const block = new Uint8Array(4096);
      for (let i = 0; i + 116 <= block.length; i += 116) {
        block.set(new TextEncoder().encode(String(b * 1000 + i).padStart(16, '0')), i);
        block.set(random(50, b * 4096 + i + 1), i + 16);
        block.copyWithin(i + 66, i + 16, i + 66);
      }
      ours += unframe(wasmStored(block)).block.length;
      napi += compressSync(Buffer.from(block)).length - 4;
    }
    expect(ours).toBeLessThan(4096 * 50 * 0.7); // it does compress
    expect(ours / napi).toBeGreaterThan(0.95);
    expect(ours / napi).toBeLessThan(1.03);
  });

  it('leaves blocks over MAX_INPUT to lz4-napi (compressBlock), whose blocks decode the same', () => {
    const data = new Uint8Array(MAX_INPUT + 1).map((_, i) => (i % 97 < 40 ? (i * 31) & 0xff : 9));
    expect(lz4Compress(data, 0)).toBeUndefined();
    const stored = compressBlock(CompressionType.LZ4, data);
    expect(stored.buffer).not.toBe(lz4Compress(new Uint8Array(1), 0)!.buffer);
    expect(Buffer.from(decompressBlock(CompressionType.LZ4, stored)).equals(Buffer.from(data))).toBe(true);
  });

  it("compressBlock's result, copied, outlives the next call", () => {
    const a = new Uint8Array(2000).fill(1);
    const kept = compressBlock(CompressionType.LZ4, a).slice();
    compressBlock(CompressionType.LZ4, new Uint8Array(3000).map((_, i) => i & 7));
    expect(Buffer.from(decompressBlock(CompressionType.LZ4, kept)).equals(Buffer.from(a))).toBe(true);
  });

  it('without WebAssembly (node --jitless) lz4-napi compresses, to the same framing', () => {
    const script = [
      "import { lz4Compress } from './src/sstable/lz4-wasm-encoder.ts';",
      "import { compressBlock, decompressBlock } from './src/sstable/compression.ts';",
      'const data = new Uint8Array(5000).map((_, i) => (i % 64 < 32 ? i & 0xff : 7));',
      'const stored = compressBlock(4, data);',
      'const back = decompressBlock(4, stored);',
      "console.log(JSON.stringify({ wasm: lz4Compress(data, 0) !== undefined, header: [stored[0], stored[1]], same: Buffer.from(back).equals(Buffer.from(data)) }));",
    ].join('\n');
    // 5000 as a varint32: 0x88 0x27.
    expect(runWithoutWebAssembly(script)).toEqual({ wasm: false, header: [0x88, 0x27], same: true });
  }, 60_000);
});
