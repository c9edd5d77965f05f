import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  getFixed32,
  getFixed64,
  getFixed64Hi,
  getFixed64Lo,
  putFixed32,
  putFixed64,
  putFixed64Parts,
} from '../../src/format/coding.js';

describe('fixed32 / fixed64', () => {
  it('little-endian layout as LevelDB (coding_test: Fixed32/Fixed64)', () => {
    const b = new Uint8Array(8);
    putFixed32(b, 0, 0x04030201);
    expect([...b.subarray(0, 4)]).toEqual([1, 2, 3, 4]);
    putFixed64(b, 0, 0x0706050403 * 256 + 0x02);
    expect([...b]).toEqual([2, 3, 4, 5, 6, 7, 0, 0]);
  });

  it('fixed32 round-trips every unsigned value and agrees with DataView', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 5 }), (v, off) => {
        const b = new Uint8Array(off + 4);
        expect(putFixed32(b, off, v)).toBe(off + 4);
        expect(getFixed32(b, off)).toBe(v);
        expect(new DataView(b.buffer).getUint32(off, true)).toBe(v);
      }),
    );
  });

  it('fixed64 round-trips safe integers and agrees with DataView', () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), (v) => {
        const b = new Uint8Array(8);
        expect(putFixed64(b, 0, v)).toBe(8);
        expect(getFixed64(b, 0)).toBe(v);
        expect(new DataView(b.buffer).getBigUint64(0, true)).toBe(BigInt(v));
      }),
    );
  });

  it('the (lo, hi) form carries all 64 bits', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (v) => {
        const b = new Uint8Array(8);
        putFixed64Parts(b, 0, Number(v & 0xffffffffn), Number(v >> 32n));
        expect(new DataView(b.buffer).getBigUint64(0, true)).toBe(v);
        expect(BigInt(getFixed64Hi(b, 0)) * 2n ** 32n + BigInt(getFixed64Lo(b, 0))).toBe(v);
      }),
    );
  });

  it('a fixed64 number outside [0, 2^53 - 1] is refused both ways', () => {
    const b = new Uint8Array(8);
    expect(() => putFixed64(b, 0, 2 ** 53)).toThrow(/INVALID_ARGUMENT/);
    expect(() => putFixed64(b, 0, -1)).toThrow(/INVALID_ARGUMENT/);
    putFixed64Parts(b, 0, 0, 0x200000);
    expect(() => getFixed64(b, 0)).toThrow(/CORRUPTION/);
  });
});
