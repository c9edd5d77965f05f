import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode, isSieveError } from '../../src/errors.js';
import { BLOOM_FILTER_POLICY_NAME, BloomFilterPolicy } from '../../src/filter/bloom.js';
import { bloomFalsePositiveRate, bloomHashCount } from '../../src/filter/sizing.js';
import { levelDBHash } from '../../src/filter/leveldb-hash.js';
import { readJsonLines } from '../support/fixtures.js';

interface BloomVector {
  bits_per_key: number;
  keys_hex: string[];
  filter_hex: string;
  source: string;
}

const fromHex = (hex: string): Uint8Array => new Uint8Array(Buffer.from(hex, 'hex'));
const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

/** LevelDB bloom_test.cc's Key(i): the 4-byte little-endian encoding of i (EncodeFixed32). */
function leKey(i: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, i >>> 0, true);
  return b;
}

function expectInvalid(fn: () => unknown): void {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(isSieveError(thrown, ErrorCode.INVALID_ARGUMENT), String(thrown)).toBe(true);
}

describe('BloomFilterPolicy: bit-exact with LevelDB', () => {
  const vectors = readJsonLines<BloomVector>('bloom-vectors.jsonl');

  it('has LevelDB fixtures to check against', () => {
    expect(vectors.length).toBeGreaterThan(0);
  });

  it('reproduces every filter real LevelDB wrote, byte for byte', () => {
    for (const v of vectors) {
      const policy = new BloomFilterPolicy(v.bits_per_key);
      const filter = policy.createFilter(v.keys_hex.map(fromHex));
      expect(toHex(filter), v.source).toBe(v.filter_hex);
    }
  });

  it('matches every key of every LevelDB-made filter (read path on LevelDB bytes)', () => {
    for (const v of vectors) {
      const policy = new BloomFilterPolicy(v.bits_per_key);
      const filter = fromHex(v.filter_hex);
      const probe = policy.newProbe();
      for (const hex of v.keys_hex) {
        const key = fromHex(hex);
        expect(policy.keyMayMatch(key, filter), `${v.source} ${hex}`).toBe(true);
        probe.setKey(key);
        expect(probe.mayMatch(filter), `${v.source} ${hex}`).toBe(true);
      }
    }
  });

  it('is named leveldb.BuiltinBloomFilter2', () => {
    expect(new BloomFilterPolicy(10).name).toBe('leveldb.BuiltinBloomFilter2');
    expect(BLOOM_FILTER_POLICY_NAME).toBe('leveldb.BuiltinBloomFilter2');
  });

  it('sizes filters as LevelDB: max(64, n·b) bits rounded up to bytes, then k', () => {
    for (const b of [1, 2, 5, 10, 16, 44, 50]) {
      const policy = new BloomFilterPolicy(b);
      for (const n of [0, 1, 3, 6, 7, 100, 1001]) {
        const keys = Array.from({ length: n }, (_, i) => leKey(i));
        const filter = policy.createFilter(keys);
        const bits = Math.max(64, n * b);
        expect(filter.length, `b=${b} n=${n}`).toBe(Math.ceil(bits / 8) + 1);
        expect(filter[filter.length - 1]).toBe(bloomHashCount(b));
      }
    }
  });
});

/** LevelDB's CreateFilter and KeyMayMatch, written plainly: a remainder per probe. */
function referenceFilter(keys: Uint8Array[], bitsPerKey: number, k: number): Uint8Array {
  const bits = Math.ceil(Math.max(64, Math.round(keys.length * bitsPerKey)) / 8) * 8;
  const out = new Uint8Array(bits / 8 + 1);
  out[bits / 8] = k;
  for (const key of keys) {
    let h = levelDBHash(key, 0xbc9f1d34);
    const delta = ((h >>> 17) | (h << 15)) >>> 0;
    for (let j = 0; j < k; j++) {
      const pos = h % bits;
      out[pos >>> 3]! |= 1 << (pos & 7);
      h = (h + delta) >>> 0;
    }
  }
  return out;
}

function referenceMayMatch(key: Uint8Array, filter: Uint8Array): boolean {
  const bits = (filter.length - 1) * 8;
  const k = filter[filter.length - 1]!;
  let h = levelDBHash(key, 0xbc9f1d34);
  const delta = ((h >>> 17) | (h << 15)) >>> 0;
  for (let j = 0; j < k; j++) {
    const pos = h % bits;
    if ((filter[pos >>> 3]! & (1 << (pos & 7))) === 0) return false;
    h = (h + delta) >>> 0;
  }
  return true;
}

describe('BloomFilterPolicy: probes bit-exact with the plain rule (a remainder per probe)', () => {
  // Sizes on both sides of 2^15 bits (where the integer remainder gives way to the float one),
  // and hashes that wrap past 2^32 between probes.
  it('builds and reads the bits a remainder per probe gives', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 12 }), { maxLength: 40 }),
        fc.constantFrom(1, 3.3, 10, 20, 900, 2000),
        fc.integer({ min: 1, max: 30 }),
        fc.array(fc.uint8Array({ maxLength: 12 }), { maxLength: 20 }),
        (keys, bitsPerKey, k, probes) => {
          const policy = new BloomFilterPolicy(bitsPerKey, k);
          const filter = policy.createFilter(keys);
          expect(toHex(filter)).toBe(toHex(referenceFilter(keys, bitsPerKey, k)));
          for (const key of [...keys, ...probes]) expect(policy.keyMayMatch(key, filter)).toBe(referenceMayMatch(key, filter));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("LevelDB's bloom_test.cc, ported", () => {
  const policy = new BloomFilterPolicy(10);

  it('EmptyFilter: an empty filter matches nothing', () => {
    // LevelDB's test probes an empty std::string filter (Build() is never called).
    const empty = new Uint8Array(0);
    expect(policy.keyMayMatch(utf8('hello'), empty)).toBe(false);
    expect(policy.keyMayMatch(utf8('world'), empty)).toBe(false);
  });

  it('Small: two keys match, two others do not', () => {
    const filter = policy.createFilter([utf8('hello'), utf8('world')]);
    expect(policy.keyMayMatch(utf8('hello'), filter)).toBe(true);
    expect(policy.keyMayMatch(utf8('world'), filter)).toBe(true);
    expect(policy.keyMayMatch(utf8('x'), filter)).toBe(false);
    expect(policy.keyMayMatch(utf8('foo'), filter)).toBe(false);
  });

  it('VaryingLengths: no false negatives, bounded size and false-positive rate', () => {
    const nextLength = (length: number): number =>
      length < 10 ? length + 1 : length < 100 ? length + 10 : length < 1000 ? length + 100 : length + 1000;
    let mediocre = 0;
    let good = 0;
    const probe = policy.newProbe();
    for (let length = 1; length <= 10_000; length = nextLength(length)) {
      const keys = Array.from({ length }, (_, i) => leKey(i));
      const filter = policy.createFilter(keys);
      expect(filter.length, `length ${length}`).toBeLessThanOrEqual(Math.floor((length * 10) / 8) + 40);
      for (let i = 0; i < length; i++) {
        probe.setKey(keys[i]!);
        if (!probe.mayMatch(filter)) expect.fail(`false negative: length ${length}, key ${i}`);
      }
      let falsePositives = 0;
      for (let i = 0; i < 10_000; i++) {
        probe.setKey(leKey(i + 1_000_000_000));
        if (probe.mayMatch(filter)) falsePositives++;
      }
      const rate = falsePositives / 10_000;
      expect(rate, `length ${length}`).toBeLessThanOrEqual(0.02);
      if (rate > 0.0125) mediocre++;
      else good++;
    }
    expect(good + mediocre).toBe(37); // 1..10, 20..100, 200..1000, 2000..10000
    expect(mediocre).toBeLessThanOrEqual(Math.floor(good / 5));
  });
});

describe('BloomFilterPolicy: reading unusual filters as LevelDB does', () => {
  const policy = new BloomFilterPolicy(10);
  const key = utf8('hello');

  it('a filter shorter than 2 bytes matches nothing (LevelDB: len < 2 → false)', () => {
    expect(policy.keyMayMatch(key, new Uint8Array([6]))).toBe(false);
    expect(policy.keyMayMatch(key, new Uint8Array([0xff]))).toBe(false);
    const probe = policy.newProbe();
    probe.setKey(key);
    expect(probe.mayMatch(new Uint8Array([0xff, 0xff, 0xff]), 1, 2)).toBe(false);
  });

  it('k > 30 is reserved for new encodings and matches everything; k = 31 .. 255', () => {
    for (const k of [31, 64, 255]) {
      const filter = new Uint8Array(9); // all bits clear
      filter[8] = k;
      expect(policy.keyMayMatch(key, filter)).toBe(true);
    }
    const filter = new Uint8Array(9);
    filter[8] = 30;
    expect(policy.keyMayMatch(key, filter)).toBe(false);
  });

  it('k = 0 matches everything (no probe can fail)', () => {
    expect(policy.keyMayMatch(key, new Uint8Array(9))).toBe(true);
  });

  it('reads the k stored in the filter, not its own', () => {
    const keys = Array.from({ length: 200 }, (_, i) => leKey(i));
    const wide = new BloomFilterPolicy(20).createFilter(keys); // k = 13
    expect(wide[wide.length - 1]).toBe(13);
    for (const k of keys) expect(policy.keyMayMatch(k, wide)).toBe(true);
  });

  it('answers "may match" for a range outside the buffer rather than reading past it', () => {
    const filter = policy.createFilter([utf8('a')]);
    const probe = policy.newProbe();
    probe.setKey(utf8('zzz-not-there'));
    expect(probe.mayMatch(filter, 0, filter.length + 8)).toBe(true);
    expect(probe.mayMatch(filter, -1, filter.length)).toBe(true);
    expect(probe.mayMatch(filter, 5, 2)).toBe(true);
  });
});

describe('BloomFilterPolicy: constructors', () => {
  it('exposes bitsPerKey and LevelDB hashCount', () => {
    for (const b of [1, 2, 3, 10, 20, 44, 100]) {
      const p = new BloomFilterPolicy(b);
      expect(p.bitsPerKey).toBe(b);
      expect(p.hashCount).toBe(bloomHashCount(b));
    }
  });

  it('accepts fractional bits/key: n·b rounded, then up to bytes; k by LevelDB rule', () => {
    const p = new BloomFilterPolicy(9.5);
    expect(p.hashCount).toBe(6); // floor(6.555)
    const keys = Array.from({ length: 101 }, (_, i) => leKey(i));
    const filter = p.createFilter(keys);
    // 101 · 9.5 = 959.5 → 960 bits = 120 bytes, + k.
    expect(filter.length).toBe(121);
    for (const k of keys) expect(p.keyMayMatch(k, filter)).toBe(true);
  });

  it('accepts an explicit hashCount, stored in each filter', () => {
    const p = new BloomFilterPolicy(10, 7);
    expect(p.hashCount).toBe(7);
    const filter = p.createFilter([utf8('x')]);
    expect(filter[filter.length - 1]).toBe(7);
  });

  it('forFalsePositiveRate: Guava bits/key, rounded optimal k, theory near p', () => {
    for (const [p, bits, k] of [
      [0.01, 9.585, 7],
      [0.001, 14.378, 10],
      [0.1, 4.793, 3],
    ] as const) {
      const policy = BloomFilterPolicy.forFalsePositiveRate(p);
      expect(policy.bitsPerKey).toBeCloseTo(bits, 3);
      expect(policy.hashCount).toBe(k);
      const theory = bloomFalsePositiveRate(policy.bitsPerKey, policy.hashCount);
      expect(theory / p).toBeGreaterThan(0.95);
      expect(theory / p).toBeLessThan(1.1);
    }
    // Needs < 1 bit/key: clamped to 1 bit/key, k = 1.
    const loose = BloomFilterPolicy.forFalsePositiveRate(0.9);
    expect(loose.bitsPerKey).toBe(1);
    expect(loose.hashCount).toBe(1);
    // Very small p: k clamps at 30.
    expect(BloomFilterPolicy.forFalsePositiveRate(1e-20).hashCount).toBe(30);
  });

  it('forFalsePositiveRate filters meet their rate in practice', () => {
    const policy = BloomFilterPolicy.forFalsePositiveRate(0.01);
    const keys = Array.from({ length: 5000 }, (_, i) => leKey(i));
    const filter = policy.createFilter(keys);
    let fp = 0;
    for (let i = 0; i < 20_000; i++) if (policy.keyMayMatch(leKey(2_000_000_000 + i), filter)) fp++;
    // 20,000 trials at p = 0.01: sd ≈ 0.0007; 0.0135 is 5 sd above.
    expect(fp / 20_000).toBeLessThan(0.0135);
  });

  it('rejects bad arguments with INVALID_ARGUMENT', () => {
    for (const b of [0, 0.5, -1, Number.NaN, Infinity]) expectInvalid(() => new BloomFilterPolicy(b));
    expectInvalid(() => new BloomFilterPolicy('10' as unknown as number));
    for (const k of [0, 31, 2.5, Number.NaN]) expectInvalid(() => new BloomFilterPolicy(10, k));
    for (const p of [0, 1, -0.1, 2, Number.NaN]) expectInvalid(() => BloomFilterPolicy.forFalsePositiveRate(p));
  });
});
