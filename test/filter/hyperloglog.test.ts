import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32c } from '@node-rs/crc32';
import { ErrorCode, isSieveError } from '../../src/errors.js';
import { HyperLogLog } from '../../src/filter/hyperloglog.js';
import { murmur3_x64_128Into } from '../../src/filter/murmur3.js';

function expectCode(code: ErrorCode, fn: () => unknown): void {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(isSieveError(thrown, code), `expected ${code}, got ${String(thrown)}`).toBe(true);
}

/** Adds the keys first..last−1, each an 8-byte little-endian counter, reusing one buffer. */
function addCounters(sketch: HyperLogLog, first: number, last: number): void {
  const key = new Uint8Array(8);
  const view = new DataView(key.buffer);
  for (let i = first; i < last; i++) {
    view.setUint32(0, i, true);
    view.setUint32(4, 0x5eed, true);
    sketch.add(key);
  }
}

const CARDINALITIES = [10, 100, 1_000, 10_000, 100_000, 1_000_000];

describe('HyperLogLog accuracy', () => {
  for (const precision of [14, 4, 10, 18]) {
    it(`p = ${precision}: relative error within 3 standard errors from 10 to 1,000,000 keys`, () => {
      const sketch = new HyperLogLog(precision);
      const tolerance = 3 * (1.04 / Math.sqrt(2 ** precision));
      expect(sketch.standardError).toBeCloseTo(tolerance / 3, 12);
      expect(sketch.count()).toBe(0);
      let added = 0;
      for (const n of CARDINALITIES) {
        addCounters(sketch, added, n);
        added = n;
        const estimate = sketch.count();
        expect(Math.abs(estimate - n) / n, `n = ${n}, estimate = ${estimate}`).toBeLessThanOrEqual(tolerance);
      }
    });
  }

  it('counts distinct keys: adding duplicates (as bytes or as strings) changes nothing', () => {
    const sketch = new HyperLogLog(12);
    for (let i = 0; i < 5_000; i++) sketch.add(`key-${i}`);
    const before = sketch.serialize();
    const estimate = sketch.count();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 5_000; i++) sketch.add(round === 1 ? new TextEncoder().encode(`key-${i}`) : `key-${i}`);
    }
    expect(sketch.serialize()).toEqual(before);
    expect(sketch.count()).toBe(estimate);
  });
});

describe('HyperLogLog registers', () => {
  it('stores rho = 1 + leading zeros of the 64 - p bits after the index', () => {
    const p = 4;
    const registerOf = (hashLo: number, hashHi: number, index: number): number => {
      const sketch = new HyperLogLog(p);
      sketch.addHash(hashLo, hashHi);
      return sketch.serialize()[8 + index]!;
    };
    // index 3 (top 4 bits 0011); the next set bit is the 8th of the remaining 60.
    expect(registerOf(0, ((3 << 28) | (1 << 20)) >>> 0, 3)).toBe(8);
    // index 15; the bit right after the index is set.
    expect(registerOf(0, 0xf8000000, 15)).toBe(1);
    // all 28 remaining high bits zero: count continues into the low word.
    expect(registerOf(0x80000000, 0x10000000, 1)).toBe(29);
    expect(registerOf(1, 0x10000000, 1)).toBe(60);
    // all 60 remaining bits zero: the maximum, 65 - p.
    expect(registerOf(0, 0x10000000, 1)).toBe(61);
  });

  it('add, addRange and addHash agree', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64, size: 'max' }), fc.nat(), fc.nat(), (data, a, b) => {
        const start = a % (data.length + 1);
        const end = start + (b % (data.length - start + 1));
        const viaAdd = new HyperLogLog(8);
        viaAdd.add(data.slice(start, end));
        const viaRange = new HyperLogLog(8);
        viaRange.addRange(data, start, end);
        const viaHash = new HyperLogLog(8);
        const out = new Uint32Array(4);
        murmur3_x64_128Into(data, start, end, 0, out);
        viaHash.addHash(out[0]!, out[1]!);
        expect(viaRange.serialize()).toEqual(viaAdd.serialize());
        expect(viaHash.serialize()).toEqual(viaAdd.serialize());
      }),
    );
  });

  it('rejects precisions outside 4..18 with INVALID_ARGUMENT', () => {
    for (const p of [3, 19, 0, -1, 4.5, Number.NaN, '14', null]) {
      expectCode(ErrorCode.INVALID_ARGUMENT, () => new HyperLogLog(p as number));
    }
    expect(new HyperLogLog(4).precision).toBe(4);
    expect(new HyperLogLog(18).precision).toBe(18);
    expect(new HyperLogLog().precision).toBe(14);
  });

  it('rejects keys that are neither bytes nor strings with a TypeError', () => {
    expect(() => new HyperLogLog().add(7 as unknown as string)).toThrow(TypeError);
  });
});

describe('HyperLogLog merge', () => {
  it('merging two sketches gives the sketch (and count) of the union', () => {
    const left = new HyperLogLog(14);
    const right = new HyperLogLog(14);
    const all = new HyperLogLog(14);
    addCounters(left, 0, 60_000);
    addCounters(right, 40_000, 100_000);
    addCounters(all, 0, 100_000);
    const rightBefore = right.serialize();
    left.merge(right);
    expect(left.serialize()).toEqual(all.serialize());
    expect(left.count()).toBe(all.count());
    expect(right.serialize()).toEqual(rightBefore);
  });

  it('merge is the sketch of the union for any key sets', () => {
    const keys = fc.array(fc.oneof(fc.string({ maxLength: 12 }), fc.uint8Array({ maxLength: 12 })), { maxLength: 200 });
    fc.assert(
      fc.property(fc.integer({ min: 4, max: 12 }), keys, keys, (p, a, b) => {
        const left = new HyperLogLog(p);
        const right = new HyperLogLog(p);
        const union = new HyperLogLog(p);
        for (const k of a) left.add(k);
        for (const k of b) right.add(k);
        for (const k of [...a, ...b]) union.add(k);
        const copy = left.copy();
        copy.merge(right);
        expect(copy.serialize()).toEqual(union.serialize());
        expect(copy.count()).toBe(union.count());
      }),
      { numRuns: 100 },
    );
  });

  it('refuses sketches of a different precision', () => {
    expectCode(ErrorCode.INVALID_ARGUMENT, () => new HyperLogLog(10).merge(new HyperLogLog(11)));
    expectCode(ErrorCode.INVALID_ARGUMENT, () => new HyperLogLog(10).merge({} as HyperLogLog));
  });
});

describe('HyperLogLog serialization', () => {
  it('round-trips: same registers and count', () => {
    fc.assert(
      fc.property(fc.integer({ min: 4, max: 18 }), fc.array(fc.string(), { maxLength: 100 }), (p, keys) => {
        const sketch = new HyperLogLog(p);
        for (const k of keys) sketch.add(k);
        const bytes = sketch.serialize();
        expect(bytes.length).toBe(8 + 2 ** p + 4);
        const back = HyperLogLog.deserialize(bytes);
        expect(back.precision).toBe(p);
        // Buffer.compare: toEqual walks a 256 KiB array element by element, slowly.
        expect(Buffer.compare(back.serialize(), bytes)).toBe(0);
        expect(back.count()).toBe(sketch.count());
      }),
      { numRuns: 50 },
    );
  });

  it('lays out the header as documented', () => {
    const sketch = new HyperLogLog(5);
    sketch.add('a');
    const bytes = sketch.serialize();
    expect([...bytes.subarray(0, 8)]).toEqual([0x53, 0x4b, 0x48, 0x4c, 1, 5, 0, 0]);
    const view = new DataView(bytes.buffer);
    expect(view.getUint32(bytes.length - 4, true)).toBe(crc32c(bytes.subarray(0, bytes.length - 4)));
  });

  const sample = (() => {
    const sketch = new HyperLogLog(4);
    for (let i = 0; i < 30; i++) sketch.add(`k${i}`);
    return sketch.serialize();
  })();

  it('reports every single-byte corruption as CORRUPTION', () => {
    for (let pos = 0; pos < sample.length; pos++) {
      for (let delta = 1; delta < 256; delta++) {
        const bad = sample.slice();
        bad[pos] = bad[pos]! ^ delta;
        expectCode(ErrorCode.CORRUPTION, () => HyperLogLog.deserialize(bad));
      }
    }
  });

  it('reports every truncation and any extension as CORRUPTION', () => {
    for (let len = 0; len < sample.length; len++) {
      expectCode(ErrorCode.CORRUPTION, () => HyperLogLog.deserialize(sample.slice(0, len)));
    }
    const longer = new Uint8Array(sample.length + 1);
    longer.set(sample);
    expectCode(ErrorCode.CORRUPTION, () => HyperLogLog.deserialize(longer));
  });

  it('checks the header and registers even when the checksum is recomputed to match', () => {
    const edited = (edit: (b: Uint8Array) => void): Uint8Array => {
      const b = sample.slice();
      edit(b);
      new DataView(b.buffer).setUint32(b.length - 4, crc32c(b.subarray(0, b.length - 4)), true);
      return b;
    };
    const cases = [
      edited((b) => (b[4] = 2)), // unknown version
      edited((b) => (b[5] = 3)), // precision below range
      edited((b) => (b[5] = 19)), // precision above range
      edited((b) => (b[5] = 5)), // length no longer matches
      edited((b) => (b[7] = 1)), // reserved
      edited((b) => (b[8] = 62)), // register above 65 - p
    ];
    for (const bad of cases) expectCode(ErrorCode.CORRUPTION, () => HyperLogLog.deserialize(bad));
    // The control: 61 = 65 - p is a legal register value.
    expect(HyperLogLog.deserialize(edited((b) => (b[8] = 61))).precision).toBe(4);
  });
});
