import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { putVarint32 } from '../../src/format/varint.js';
import { thrownBy } from '../support/error-code.js';
import {
  compressBlock,
  CompressionType,
  compressionTypeName,
  decompressBlock,
  decompressBlockInScratch,
  decompressForLookup,
  lookupLength,
  setLz4NapiLoaderForTests,
  setSnappyLoaderForTests,
} from '../../src/sstable/compression.js';

const TYPES = [CompressionType.NONE, CompressionType.SNAPPY, CompressionType.LZ4] as const;
const bytes = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));

/** Compressible and incompressible inputs of 0..~40 KiB. */
const dataArb = fc.oneof(
  fc.uint8Array({ maxLength: 600 }),
  fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 1000 })).map(([unit, n]) => {
    const out = new Uint8Array(unit.length * n);
    for (let i = 0; i < n; i++) out.set(unit, i * unit.length);
    return out;
  }),
);

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (isSieveError(err)) return err.code;
    throw err;
  }
}

describe('compression formats', () => {
  it('type bytes are LevelDB\'s and RocksDB\'s', () => {
    expect(CompressionType).toEqual({ NONE: 0, SNAPPY: 1, LZ4: 4 });
    expect(compressionTypeName(1)).toBe('snappy');
  });

  it('snappy writes the raw format: varint length, then elements (a 3-byte literal: tag 0x08)', () => {
    expect([...compressBlock(CompressionType.SNAPPY, bytes('abc'))]).toEqual([3, 0x08, 0x61, 0x62, 0x63]);
  });

  it('lz4 writes varint32 length + one raw LZ4 block (RocksDB format_version 2)', () => {
    // A 3-byte input is one literal-only sequence: token 0x30, then the literals.
    expect([...compressBlock(CompressionType.LZ4, bytes('abc'))]).toEqual([3, 0x30, 0x61, 0x62, 0x63]);
    // Longer inputs get a multi-byte varint where lz4-napi had a 4-byte length.
    const big = new Uint8Array(300).fill(7);
    const c = compressBlock(CompressionType.LZ4, big);
    expect([...c.subarray(0, 2)]).toEqual([0xac, 0x02]);
    expect(c.length).toBeLessThan(40);
  });

  it('none is the identity (no copy)', () => {
    const raw = bytes('hello');
    expect(compressBlock(CompressionType.NONE, raw)).toBe(raw);
    expect(decompressBlock(CompressionType.NONE, raw)).toBe(raw);
  });
});

describe('compression round trips', () => {
  it('every type round-trips any input, including empty and sub-array views', () => {
    fc.assert(
      fc.property(dataArb, fc.constantFrom(...TYPES), fc.nat(3), (data, type, pad) => {
        const host = new Uint8Array(data.length + pad + 2).fill(0x5a);
        host.set(data, pad);
        const view = host.subarray(pad, pad + data.length);
        const stored = compressBlock(type, view);
        const back = decompressBlock(type, stored);
        expect(Buffer.from(back).equals(Buffer.from(data))).toBe(true);
        expect(host[pad + data.length]).toBe(0x5a); // nothing written outside the view
      }),
      { numRuns: 300 },
    );
  });
});

describe('decompression of bad data', () => {
  it('an unknown type is NOT_SUPPORTED', () => {
    for (const t of [2, 3, 5, 7, 255]) {
      expect(codeOf(() => decompressBlock(t, bytes('x'), 'f.ldb', 9))).toBe('NOT_SUPPORTED');
    }
    expect(codeOf(() => compressBlock(2 as CompressionType, bytes('x')))).toBe('NOT_SUPPORTED');
  });

  it('a declared length beyond the ratio bound or maxSize is CORRUPTION before any allocation', () => {
    for (const type of [CompressionType.SNAPPY, CompressionType.LZ4]) {
      const hdr = new Uint8Array(8);
      const end = putVarint32(hdr, 0, 0xfffffff0);
      const claim = hdr.slice(0, end + 3);
      expect(codeOf(() => decompressBlock(type, claim, 'f.ldb', 0))).toBe('CORRUPTION');
      const ok = compressBlock(type, new Uint8Array(1000).fill(1));
      expect(codeOf(() => decompressBlock(type, ok, 'f.ldb', 0, 999))).toBe('CORRUPTION');
      expect(decompressBlock(type, ok, 'f.ldb', 0, 1000).length).toBe(1000);
      expect(codeOf(() => decompressBlock(type, new Uint8Array(0)))).toBe('CORRUPTION');
      expect(codeOf(() => decompressBlock(type, new Uint8Array([0x80, 0x80])))).toBe('CORRUPTION');
    }
  });

  it('a length that disagrees with the data is CORRUPTION', () => {
    for (const type of [CompressionType.SNAPPY, CompressionType.LZ4]) {
      const c = compressBlock(type, bytes('abcdefgh')).slice();
      c[0] = 20; // claims 20 bytes, holds 8
      expect(codeOf(() => decompressBlock(type, c))).toBe('CORRUPTION');
    }
  });

  it('random flips and truncations: a result or CORRUPTION, never another error', () => {
    fc.assert(
      fc.property(
        dataArb,
        fc.constantFrom(CompressionType.SNAPPY, CompressionType.LZ4),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { maxLength: 3 }),
        fc.nat(8),
        (data, type, flips, cut) => {
          const stored = compressBlock(type, data).slice();
          for (const [pos, x] of flips) stored[pos % stored.length] ^= x;
          const bad = stored.subarray(0, Math.max(0, stored.length - cut));
          const code = codeOf(() => {
            const out = decompressBlock(type, bad, 'f.ldb', 0);
            expect(out.length).toBeLessThanOrEqual(Math.max(data.length, 64 * 1024 * 1024));
          });
          expect([undefined, 'CORRUPTION']).toContain(code);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('decompression for a point lookup (decompressForLookup)', () => {
  /** `stored` in a scratch buffer as a table reads it: 4 spare bytes first. */
  function inScratch(stored: Uint8Array): Buffer {
    const scratch = Buffer.alloc(stored.length + 4 + 5, 0x77);
    scratch.set(stored, 4);
    return scratch;
  }

  it('gives the contents as [0, lookupLength) of its bytes, for every type, as decompressBlockInScratch does', () => {
    fc.assert(
      fc.property(dataArb, fc.constantFrom(...TYPES), (data, type) => {
        const stored = compressBlock(type, data).slice();
        const out = decompressForLookup(type, inScratch(stored), 4, stored.length, 'f.ldb', 0);
        expect(Buffer.from(out.subarray(0, lookupLength)).equals(Buffer.from(data))).toBe(true);
        const plain = decompressBlockInScratch(type, inScratch(stored), 4, stored.length, 'f.ldb', 0);
        expect(Buffer.from(plain).equals(Buffer.from(data))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('an LZ4 block too large to decode in place goes the general way, with its own length', () => {
    const data = Uint8Array.from({ length: 600 * 1024 }, (_, i) => (Math.imul(i, 2654435761) >>> 24) & 0xff); // incompressible
    const stored = compressBlock(CompressionType.LZ4, data).slice();
    const out = decompressForLookup(CompressionType.LZ4, inScratch(stored), 4, stored.length, 'f.ldb', 0, 1 << 20);
    expect(lookupLength).toBe(data.length);
    expect(Buffer.from(out.subarray(0, lookupLength)).equals(Buffer.from(data))).toBe(true);
  });

  it('damaged LZ4 and Snappy blocks: the contents or CORRUPTION, never another error', () => {
    fc.assert(
      fc.property(
        dataArb,
        fc.constantFrom(CompressionType.SNAPPY, CompressionType.LZ4),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 3 }),
        fc.nat(8),
        (data, type, flips, cut) => {
          const stored = compressBlock(type, data).slice();
          for (const [pos, x] of flips) stored[pos % stored.length] ^= x;
          const size = Math.max(0, stored.length - cut);
          const code = codeOf(() => {
            decompressForLookup(type, inScratch(stored), 4, size, 'f.ldb', 0);
            expect(lookupLength).toBeLessThanOrEqual(Math.max(data.length, 64 * 1024 * 1024));
          });
          expect([undefined, 'CORRUPTION']).toContain(code);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('an addon that cannot be loaded', () => {
  const failing = (name: string) => (): never => {
    throw new Error(`Cannot find module ${name}-linux-x64-gnu`);
  };
  // lz4-napi serves only blocks too large for the addon's and the WebAssembly codecs: over 64 KiB
  // to compress, over WASM_MAX_BYTES (1 MiB) to decode.
  const cases = [
    {
      name: 'snappy',
      type: CompressionType.SNAPPY,
      contents: new TextEncoder().encode('sievekv '.repeat(40)),
      breakLoader: (): (() => void) => {
        const previous = setSnappyLoaderForTests(failing('snappy'));
        return () => void setSnappyLoaderForTests(previous);
      },
    },
    {
      name: 'lz4-napi',
      type: CompressionType.LZ4,
      contents: new TextEncoder().encode('sievekv '.repeat(160 * 1024)), // 1.25 MiB
      breakLoader: (): (() => void) => {
        const previous = setLz4NapiLoaderForTests(failing('lz4-napi'));
        return () => void setLz4NapiLoaderForTests(previous);
      },
    },
  ];
  for (const { name, type, contents, breakLoader } of cases) {
    it(`${name}: NOT_SUPPORTED, not CORRUPTION (the block may be whole), and loaded once it can be`, () => {
      const stored = compressBlock(type, contents);
      const restore = breakLoader();
      try {
        for (const attempt of [() => decompressBlock(type, stored, '000007.ldb', 4096), () => compressBlock(type, contents)]) {
          const thrown = thrownBy(attempt);
          expect(isSieveError(thrown, 'NOT_SUPPORTED')).toBe(true);
          expect(String((thrown as Error).message)).toContain(`the ${name} addon could not be loaded`);
        }
      } finally {
        restore();
      }
      expect(Buffer.from(decompressBlock(type, stored)).equals(Buffer.from(contents))).toBe(true);
    });
  }
});

