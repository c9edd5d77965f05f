/**
 * The WebAssembly LZ4 block decoder (src/sstable/lz4-wasm.ts): it decodes what lz4-napi (the
 * reference: the encoder we write with) decodes, refuses malformed blocks with -1, and never
 * touches memory outside its regions and their SLACK. decompressBlock uses it for blocks up to
 * WASM_MAX_BYTES and lz4-napi beyond, or where WebAssembly is missing.
 */
import fc from 'fast-check';
import { compressSync, uncompressSync } from 'lz4-napi';
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { compressBlock, CompressionType, decompressBlock } from '../../src/sstable/compression.js';
import { type Lz4WasmDecoder, lz4WasmDecoder, SLACK, WASM_MAX_BYTES } from '../../src/sstable/lz4-wasm.js';
import { runWithoutWebAssembly } from '../support/jitless.js';

const decoder = lz4WasmDecoder();

function wasm(): Lz4WasmDecoder {
  if (decoder === undefined) throw new Error('this Node has no WebAssembly');
  return decoder;
}

/** A raw LZ4 block (no length prefix) of `data`, as lz4-napi encodes it. */
function rawBlock(data: Uint8Array): Uint8Array {
  return compressSync(Buffer.from(data)).subarray(4);
}

const CANARY = 0xa5;

/**
 * Decodes `block` with the output region `capacity` bytes long, canaries around both regions;
 * returns the result and whether every byte outside [0, block + SLACK) and [dst, dst + capacity +
 * SLACK) kept its canary.
 */
function decodeGuarded(block: Uint8Array, capacity: number): { written: number; output: Uint8Array; clean: boolean } {
  const { bytes, decode } = wasm();
  const dst = 64 + block.length + SLACK + 64;
  const end = dst + capacity + SLACK + 64;
  bytes.fill(CANARY, 0, end);
  bytes.set(block, 64);
  const written = decode(64, 64 + block.length, dst, dst + capacity);
  let clean = true;
  for (let i = 0; i < 64; i++) if (bytes[i] !== CANARY) clean = false;
  for (let i = 64 + block.length + SLACK; i < dst; i++) if (bytes[i] !== CANARY) clean = false;
  for (let i = dst + capacity + SLACK; i < end; i++) if (bytes[i] !== CANARY) clean = false;
  return { written, output: bytes.slice(dst, dst + Math.max(0, written)), clean };
}

/** Inputs LZ4 encodes every way: literals only, short and long matches, runs (offset < 8). */
const dataArb = fc.oneof(
  fc.uint8Array({ maxLength: 2000 }),
  fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 24 }), fc.integer({ min: 1, max: 800 })).map(([unit, n]) => {
    const out = new Uint8Array(unit.length * n);
    for (let i = 0; i < n; i++) out.set(unit, i * unit.length);
    return out;
  }),
  fc.array(fc.tuple(fc.uint8Array({ maxLength: 300 }), fc.nat(5)), { maxLength: 12 }).map((parts) => {
    // Pieces repeated at once or later: matches of every offset and length.
    const chunks: Uint8Array[] = [];
    for (const [piece, repeat] of parts) {
      chunks.push(piece);
      for (let r = 0; r < repeat; r++) chunks.push(chunks[(r * 7) % chunks.length]!);
    }
    return Uint8Array.from(chunks.flatMap((c) => [...c]));
  }),
);

describe('the WebAssembly LZ4 decoder', () => {
  it('is available on this Node', () => {
    expect(decoder).toBeDefined();
    expect(wasm().bytes.length).toBeGreaterThanOrEqual(WASM_MAX_BYTES + 2 * SLACK + 8);
  });

  it('decodes any block lz4-napi encodes to the same bytes, touching nothing outside its regions', () => {
    fc.assert(
      fc.property(dataArb, (data) => {
        const block = rawBlock(data);
        const { written, output, clean } = decodeGuarded(block, data.length);
        expect(written).toBe(data.length);
        expect(Buffer.from(output).equals(Buffer.from(data))).toBe(true);
        expect(clean).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('refuses hand-made malformed blocks', () => {
    expect(decodeGuarded(Uint8Array.from([0x10, 0x61, 0x01, 0x00, 0x00]), 10).written).toBe(5); // the shape the cases break
    const cases: Array<[string, number[], number]> = [
      ['empty input', [], 10],
      // Each is well formed but for what it names: a last sequence (token 0x00) ends it.
      ['match offset 0', [0x10, 0x61, 0x00, 0x00, 0x00], 10],
      ['match before the output start', [0x10, 0x61, 0x02, 0x00, 0x00], 10],
      ['literals past the input', [0x50, 0x61, 0x62], 10],
      ['literals past the output', [0x30, 0x61, 0x62, 0x63], 2],
      ['match past the output', [0x1f, 0x61, 0x01, 0x00, 0x10, 0x00], 10],
      ['a cut offset', [0x10, 0x61, 0x01], 10],
      ['a literal length byte missing', [0xf0], 100],
      ['a match length byte missing', [0x1f, 0x61, 0x01, 0x00], 100],
      ['a literal length of 255-bytes only past the output', [0xf0, 255, 255, 255, 255], 600],
    ];
    for (const [why, block, capacity] of cases) {
      const { written, clean } = decodeGuarded(Uint8Array.from(block), capacity);
      expect({ why, written }).toEqual({ why, written: -1 });
      expect(clean).toBe(true);
    }
  });

  it('decodes hand-made blocks: a run (offset 1), extended lengths, a short output', () => {
    // 'a', then a match at offset 1 of 4 + 15 + 3 = 22 bytes: 23 a's.
    expect(decodeGuarded(Uint8Array.from([0x1f, 0x61, 0x01, 0x00, 0x03, 0x00]), 23)).toMatchObject({ written: 23, clean: true });
    expect(Buffer.from(decodeGuarded(Uint8Array.from([0x1f, 0x61, 0x01, 0x00, 0x03, 0x00]), 23).output).toString()).toBe('a'.repeat(23));
    // 15 + 255 + 1 = 271 literals.
    const literals = new Uint8Array(271).map((_, i) => i & 0xff);
    const block = Uint8Array.from([0xf0, 255, 1, ...literals]);
    const { written, output } = decodeGuarded(block, 271);
    expect(written).toBe(271);
    expect(Buffer.from(output).equals(Buffer.from(literals))).toBe(true);
    // A well-formed block shorter than the room: the count tells (decompressBlock refuses it).
    expect(decodeGuarded(Uint8Array.from([0x20, 0x61, 0x62]), 10).written).toBe(2);
  });

  it('never writes outside its regions for flipped or cut blocks, and refuses or decodes them', () => {
    fc.assert(
      fc.property(
        dataArb,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 }),
        fc.nat(6),
        (data, flips, cut) => {
          const block = rawBlock(data).slice();
          if (block.length === 0) return;
          for (const [pos, x] of flips) block[pos % block.length] ^= x;
          const bad = block.subarray(0, Math.max(0, block.length - cut));
          const { written, clean } = decodeGuarded(bad, data.length);
          expect(clean).toBe(true);
          expect(written).toBeGreaterThanOrEqual(-1);
          expect(written).toBeLessThanOrEqual(data.length);
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('decompressBlock around the WebAssembly decoder', () => {
  it('blocks over WASM_MAX_BYTES go to lz4-napi, and decode the same', () => {
    const data = new Uint8Array(WASM_MAX_BYTES + 4096).map((_, i) => (i * 2654435761) >>> 28);
    const stored = compressBlock(CompressionType.LZ4, data);
    expect(stored.length + data.length).toBeGreaterThan(WASM_MAX_BYTES);
    expect(Buffer.from(decompressBlock(CompressionType.LZ4, stored)).equals(Buffer.from(data))).toBe(true);
    const short = stored.slice(0, stored.length - 3);
    let code: string | undefined;
    try {
      decompressBlock(CompressionType.LZ4, short, 'big.ldb', 0);
    } catch (err) {
      code = isSieveError(err) ? err.code : String(err);
    }
    expect(code).toBe('CORRUPTION');
  });

  it('a block under the limit gives the bytes lz4-napi gives', () => {
    const data = new Uint8Array(4096).map((_, i) => (i % 100 < 50 ? (i * 131) & 0xff : 65));
    const stored = compressBlock(CompressionType.LZ4, data);
    const framed = Buffer.alloc(4 + stored.length - 2);
    framed.writeUInt32LE(4096);
    framed.set(stored.subarray(2), 4); // 4096 takes a 2-byte varint
    expect(Buffer.from(decompressBlock(CompressionType.LZ4, stored)).equals(uncompressSync(framed))).toBe(true);
  });

  it('without WebAssembly (node --jitless) the decoder is absent and lz4-napi decodes', () => {
    const script = [
      "import { lz4WasmDecoder } from './src/sstable/lz4-wasm.ts';",
      "import { compressBlock, decompressBlock } from './src/sstable/compression.ts';",
      'const data = new Uint8Array(5000).map((_, i) => (i % 64 < 32 ? i & 0xff : 7));',
      'const back = decompressBlock(4, compressBlock(4, data));',
      "console.log(JSON.stringify({ wasm: lz4WasmDecoder() !== undefined, same: Buffer.from(back).equals(Buffer.from(data)) }));",
    ].join('\n');
    expect(runWithoutWebAssembly(script)).toEqual({ wasm: false, same: true });
  }, 60_000);
});
