import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32c } from '@node-rs/crc32';
import { ErrorCode, isSieveError } from '../../src/errors.js';
import { BloomFilter, multiplyShift, type BloomFilterOptions } from '../../src/filter/bloom-filter.js';
import { optimalNumOfBits, optimalNumOfHashFunctions } from '../../src/filter/sizing.js';

type Key = Uint8Array | string;

const keyArb: fc.Arbitrary<Key> = fc.oneof(fc.uint8Array({ maxLength: 40 }), fc.string({ maxLength: 20 }));
const keysArb = fc.uniqueArray(keyArb, {
  maxLength: 300,
  selector: (k) => (typeof k === 'string' ? `s${k}` : `b${Buffer.from(k).toString('hex')}`),
});
const optionsArb: fc.Arbitrary<BloomFilterOptions> = fc.record({
  expectedInsertions: fc.integer({ min: 0, max: 500 }),
  fpp: fc.double({ min: 0.0005, max: 0.5, noNaN: true }),
  seed: fc.integer({ min: 0, max: 0xffffffff }),
});

function filterOf(options: BloomFilterOptions, keys: readonly Key[]): BloomFilter {
  const f = BloomFilter.create(options);
  for (const k of keys) f.add(k);
  return f;
}

function expectCode(code: ErrorCode, fn: () => unknown): void {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(isSieveError(thrown, code), `expected ${code}, got ${String(thrown)}`).toBe(true);
}

/** Counts set bits in the serialized bit array (independent of the filter's own count). */
function setBitsOf(serialized: Uint8Array): number {
  let count = 0;
  for (let i = 16; i < serialized.length - 4; i++) {
    for (let b = serialized[i]!; b !== 0; b &= b - 1) count++;
  }
  return count;
}

/** A counter as 8 little-endian bytes: deterministic, distinct keys. */
function counterKey(i: number, tag: number): Uint8Array {
  const out = new Uint8Array(9);
  const view = new DataView(out.buffer);
  view.setUint8(0, tag);
  view.setFloat64(1, i, true);
  return out;
}

describe('BloomFilter.create', () => {
  it("sizes with Guava's formulas: m rounded up to 64 bits, k from the unrounded m", () => {
    for (const [n, p] of [
      [0, 0.01],
      [1, 0.5],
      [1, 0.99],
      [100, 0.03],
      [10_000, 0.01],
      [1_000_000, 0.001],
    ] as const) {
      const f = BloomFilter.create({ expectedInsertions: n, fpp: p });
      const bits = optimalNumOfBits(Math.max(1, n), p);
      expect(f.bitSize).toBe(Math.max(64, Math.ceil(bits / 64) * 64));
      expect(f.hashCount).toBe(optimalNumOfHashFunctions(Math.max(1, n), bits));
      expect(f.seed).toBe(0);
    }
  });

  it('rejects bad arguments with INVALID_ARGUMENT', () => {
    const bad: unknown[] = [
      { expectedInsertions: -1, fpp: 0.01 },
      { expectedInsertions: 1.5, fpp: 0.01 },
      { expectedInsertions: Number.NaN, fpp: 0.01 },
      { expectedInsertions: '10', fpp: 0.01 },
      { expectedInsertions: 10, fpp: 0 },
      { expectedInsertions: 10, fpp: 1 },
      { expectedInsertions: 10, fpp: -0.1 },
      { expectedInsertions: 10, fpp: Number.NaN },
      { expectedInsertions: 10, fpp: '0.1' },
      { expectedInsertions: 10, fpp: 0.01, seed: -1 },
      { expectedInsertions: 10, fpp: 0.01, seed: 2 ** 32 },
      { expectedInsertions: 10, fpp: 0.01, seed: 0.5 },
      { expectedInsertions: 1e10, fpp: 0.01 }, // needs more than 2^32 bits
      { expectedInsertions: 1, fpp: 1e-80 }, // needs more than 255 probes
      null,
      undefined,
    ];
    for (const options of bad) expectCode(ErrorCode.INVALID_ARGUMENT, () => BloomFilter.create(options as BloomFilterOptions));
  });
});

describe('BloomFilter keys', () => {
  it('never gives a false negative', () => {
    fc.assert(
      fc.property(optionsArb, keysArb, (options, keys) => {
        const f = filterOf(options, keys);
        for (const k of keys) expect(f.mightContain(k)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('hashes a string as its UTF-8 bytes (lone surrogates as U+FFFD, like Buffer.from)', () => {
    const unit = fc.oneof(
      fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
      fc.constantFrom('a', 'é', '€', '😀'),
    );
    fc.assert(
      fc.property(fc.array(fc.string({ unit, maxLength: 30 }), { maxLength: 40 }), (strings) => {
        const a = filterOf({ expectedInsertions: 50, fpp: 0.01 }, strings);
        const b = filterOf(
          { expectedInsertions: 50, fpp: 0.01 },
          strings.map((s) => new Uint8Array(Buffer.from(s, 'utf8'))),
        );
        expect(a.serialize()).toEqual(b.serialize());
      }),
      { numRuns: 200 },
    );
  });

  it('add returns true when bits change and false for a repeated key', () => {
    const f = BloomFilter.create({ expectedInsertions: 100, fpp: 0.01 });
    expect(f.add('alpha')).toBe(true);
    expect(f.add('alpha')).toBe(false);
    expect(f.add(new TextEncoder().encode('alpha'))).toBe(false);
    expect(f.add('beta')).toBe(true);
  });

  it('rejects keys that are neither bytes nor strings with a TypeError', () => {
    const f = BloomFilter.create({ expectedInsertions: 10, fpp: 0.01 });
    expect(() => f.add(42 as unknown as string)).toThrow(TypeError);
    expect(() => f.mightContain(null as unknown as string)).toThrow(TypeError);
  });
});

describe('BloomFilter false-positive rate and estimates', () => {
  for (const fpp of [0.03, 0.01, 0.001]) {
    it(`measures close to the configured ${fpp} with 10,000 keys and 100,000 absent probes`, () => {
      const n = 10_000;
      const probes = 100_000;
      const f = BloomFilter.create({ expectedInsertions: n, fpp });
      for (let i = 0; i < n; i++) f.add(counterKey(i, 1));
      let hits = 0;
      for (let i = 0; i < probes; i++) if (f.mightContain(counterKey(i, 2))) hits++;
      const measured = hits / probes;
      const m = f.bitSize;
      const k = f.hashCount;
      const theory = Math.pow(1 - Math.exp((-k * n) / m), k);
      // Guava's rounding of m and k keeps the theoretical rate near the target.
      expect(Math.abs(theory - fpp) / fpp).toBeLessThan(0.1);
      // Binomial tolerance: 4 standard deviations of the measured proportion, plus 3% of the
      // rate for the classic formula's own small error.
      const sigma = Math.sqrt((theory * (1 - theory)) / probes);
      expect(Math.abs(measured - theory)).toBeLessThan(4 * sigma + 0.03 * theory);
      // Guava's expectedFpp from the actual bit count agrees as well.
      expect(Math.abs(measured - f.expectedFpp())).toBeLessThan(4 * sigma + 0.03 * theory);
      // approximateElementCount within a few percent of the truth.
      expect(Math.abs(f.approximateElementCount() - n) / n).toBeLessThan(0.03);
    });
  }

  it('approximateElementCount tracks partial fills; expectedFpp uses the exact bit count', () => {
    const f = BloomFilter.create({ expectedInsertions: 20_000, fpp: 0.01 });
    expect(f.approximateElementCount()).toBe(0);
    expect(f.expectedFpp()).toBe(0);
    for (let i = 0; i < 5_000; i++) f.add(`user:${i}`);
    expect(Math.abs(f.approximateElementCount() - 5_000) / 5_000).toBeLessThan(0.03);
    const setBits = setBitsOf(f.serialize());
    expect(f.expectedFpp()).toBe(Math.pow(setBits / f.bitSize, f.hashCount));
  });

  it('maps a 32-bit hash into [0, m) exactly as floor(x * m / 2^32), for m up to 2^32', () => {
    const mArb = fc.oneof(fc.integer({ min: 1, max: 2 ** 32 }), fc.constantFrom(1, 64, 2 ** 21, 2 ** 32 - 64, 2 ** 32));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), mArb, (x, m) => {
        const expected = Number((BigInt(x) * BigInt(m)) >> 32n);
        const index = multiplyShift(x, Math.floor(m / 65536), m % 65536);
        expect(index).toBe(expected);
        expect(index).toBeLessThan(m);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('BloomFilter union', () => {
  it('the union of two filters is the filter of the union of their keys', () => {
    fc.assert(
      fc.property(optionsArb, keysArb, keysArb, (options, left, right) => {
        const a = filterOf(options, left);
        const b = filterOf(options, right);
        const before = a.serialize();
        const u = a.union(b);
        const expected = filterOf(options, [...left, ...right]);
        expect(u.serialize()).toEqual(expected.serialize());
        expect(u.expectedFpp()).toBe(expected.expectedFpp());
        expect(a.serialize()).toEqual(before); // union leaves its operands alone
        a.putAll(b); // putAll merges in place
        expect(a.serialize()).toEqual(expected.serialize());
        expect(a.approximateElementCount()).toBe(expected.approximateElementCount());
      }),
      { numRuns: 100 },
    );
  });

  it('refuses filters of a different size, hash count or seed', () => {
    const base = BloomFilter.create({ expectedInsertions: 100, fpp: 0.01 });
    const others = [
      BloomFilter.create({ expectedInsertions: 200, fpp: 0.01 }),
      BloomFilter.create({ expectedInsertions: 100, fpp: 0.01, seed: 1 }),
    ];
    // Same m (rounded up to 64 bits) but a different k.
    const sameBits = BloomFilter.create({ expectedInsertions: 10, fpp: 0.05 });
    const fewerProbes = BloomFilter.create({ expectedInsertions: 12, fpp: 0.1 });
    expect(sameBits.bitSize).toBe(fewerProbes.bitSize);
    expect(sameBits.hashCount).not.toBe(fewerProbes.hashCount);
    expect(sameBits.isCompatible(fewerProbes)).toBe(false);
    expectCode(ErrorCode.INVALID_ARGUMENT, () => sameBits.union(fewerProbes));
    for (const other of others) {
      expect(base.isCompatible(other)).toBe(false);
      expectCode(ErrorCode.INVALID_ARGUMENT, () => base.union(other));
      expectCode(ErrorCode.INVALID_ARGUMENT, () => base.putAll(other));
    }
    expectCode(ErrorCode.INVALID_ARGUMENT, () => base.putAll({} as BloomFilter));
    expect(base.isCompatible(BloomFilter.create({ expectedInsertions: 100, fpp: 0.01 }))).toBe(true);
  });
});

describe('BloomFilter serialization', () => {
  it('round-trips: same bits, parameters and answers', () => {
    fc.assert(
      fc.property(optionsArb, keysArb, (options, keys) => {
        const f = filterOf(options, keys);
        const bytes = f.serialize();
        const g = BloomFilter.deserialize(bytes);
        expect(g.serialize()).toEqual(bytes);
        expect(g.bitSize).toBe(f.bitSize);
        expect(g.hashCount).toBe(f.hashCount);
        expect(g.seed).toBe(f.seed);
        expect(g.expectedFpp()).toBe(f.expectedFpp());
        for (const k of keys) expect(g.mightContain(k)).toBe(true);
        // The copy is independent of the input bytes.
        bytes.fill(0);
        for (const k of keys) expect(g.mightContain(k)).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it('reads a filter from a sub-range of a larger buffer', () => {
    const f = filterOf({ expectedInsertions: 30, fpp: 0.01 }, ['a', 'b', 'c']);
    const bytes = f.serialize();
    const big = new Uint8Array(bytes.length + 7);
    big.set(bytes, 3);
    expect(BloomFilter.deserialize(big.subarray(3, 3 + bytes.length)).serialize()).toEqual(bytes);
  });

  it('lays out the header as documented', () => {
    const f = BloomFilter.create({ expectedInsertions: 20, fpp: 0.05, seed: 0x01020304 });
    const bytes = f.serialize();
    const view = new DataView(bytes.buffer);
    expect([...bytes.subarray(0, 4)]).toEqual([0x53, 0x4b, 0x42, 0x46]);
    expect(bytes[4]).toBe(1);
    expect(bytes[5]).toBe(f.hashCount);
    expect(view.getUint16(6, true)).toBe(0);
    expect(view.getUint32(8, true)).toBe(0x01020304);
    expect(view.getUint32(12, true)).toBe(f.bitSize / 64);
    expect(bytes.length).toBe(16 + f.bitSize / 8 + 4);
    expect(view.getUint32(bytes.length - 4, true)).toBe(crc32c(bytes.subarray(0, bytes.length - 4)));
  });

  const sample = filterOf({ expectedInsertions: 20, fpp: 0.05, seed: 7 }, ['x', 'y', 'z', 'w']).serialize();

  it('reports every single-byte corruption as CORRUPTION', () => {
    for (let pos = 0; pos < sample.length; pos++) {
      for (let delta = 1; delta < 256; delta++) {
        const bad = sample.slice();
        bad[pos] = bad[pos]! ^ delta;
        expectCode(ErrorCode.CORRUPTION, () => BloomFilter.deserialize(bad));
      }
    }
  });

  it('reports every truncation and any extension as CORRUPTION', () => {
    for (let len = 0; len < sample.length; len++) {
      expectCode(ErrorCode.CORRUPTION, () => BloomFilter.deserialize(sample.slice(0, len)));
    }
    const longer = new Uint8Array(sample.length + 1);
    longer.set(sample);
    expectCode(ErrorCode.CORRUPTION, () => BloomFilter.deserialize(longer));
  });

  it('checks the header fields even when the checksum is recomputed to match', () => {
    const withHeader = (edit: (b: Uint8Array, v: DataView) => void): Uint8Array => {
      const b = sample.slice();
      const v = new DataView(b.buffer);
      edit(b, v);
      v.setUint32(b.length - 4, crc32c(b.subarray(0, b.length - 4)), true);
      return b;
    };
    const cases = [
      withHeader((b) => (b[4] = 2)), // unknown version
      withHeader((b) => (b[5] = 0)), // k = 0
      withHeader((_, v) => v.setUint16(6, 1, true)), // reserved
      withHeader((_, v) => v.setUint32(12, 0, true)), // no words
      withHeader((_, v) => v.setUint32(12, 0xffffffff, true)), // absurd size: no allocation
      withHeader((_, v) => v.setUint32(12, v.getUint32(12, true) + 1, true)), // length mismatch
    ];
    for (const bad of cases) expectCode(ErrorCode.CORRUPTION, () => BloomFilter.deserialize(bad));
    // The control: a recomputed checksum over unchanged fields is accepted.
    expect(BloomFilter.deserialize(withHeader(() => {})).serialize()).toEqual(sample);
  });
});
