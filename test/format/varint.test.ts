import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import {
  ByteReader,
  MAX_VARINT32_LENGTH,
  MAX_VARINT64_LENGTH,
  putVarint32,
  putVarint64,
  varint32Length,
  varint64Length,
} from '../../src/format/varint.js';

function expectCorruption(fn: () => unknown, offset?: number): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(isSieveError(caught, 'CORRUPTION'), String(caught)).toBe(true);
  if (offset !== undefined) expect((caught as { offset?: number }).offset).toBe(offset);
}

describe('varint32', () => {
  it('encodes the LEB128 bytes LevelDB writes (published protobuf examples)', () => {
    const dst = new Uint8Array(5);
    expect(putVarint32(dst, 0, 1)).toBe(1);
    expect([...dst.subarray(0, 1)]).toEqual([0x01]);
    expect(putVarint32(dst, 0, 300)).toBe(2);
    expect([...dst.subarray(0, 2)]).toEqual([0xac, 0x02]);
    expect(putVarint32(dst, 0, 0xffffffff)).toBe(5);
    expect([...dst]).toEqual([0xff, 0xff, 0xff, 0xff, 0x0f]);
  });

  it('round-trips every unsigned 32-bit value and reports its length', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 7 }), (v, off) => {
        const dst = new Uint8Array(off + MAX_VARINT32_LENGTH);
        const end = putVarint32(dst, off, v);
        expect(end - off).toBe(varint32Length(v));
        const r = new ByteReader(dst, off, end);
        expect(r.varint32()).toBe(v);
        expect(r.pos).toBe(end);
      }),
    );
  });

  it('boundary lengths', () => {
    for (const [v, n] of [
      [0, 1], [127, 1], [128, 2], [16383, 2], [16384, 3], [2097151, 3], [2097152, 4],
      [268435455, 4], [268435456, 5], [0xffffffff, 5],
    ] as const) {
      expect(varint32Length(v)).toBe(n);
    }
  });

  it('a varint running past the limit is CORRUPTION naming the file offset', () => {
    const dst = new Uint8Array(5);
    putVarint32(dst, 0, 0xffffffff);
    for (let limit = 0; limit < 5; limit++) {
      expectCorruption(() => new ByteReader(dst, 0, limit, 'f.ldb', 100).varint32(), 100);
    }
  });

  it('more than 5 bytes or bits beyond 32 are CORRUPTION', () => {
    expectCorruption(() => new ByteReader(new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x80, 0x00])).varint32());
    expectCorruption(() => new ByteReader(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x10])).varint32());
  });

  it('never throws anything but CORRUPTION on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 12 }), (bytes) => {
        const r = new ByteReader(bytes);
        try {
          const v = r.varint32();
          expect(v).toBeGreaterThanOrEqual(0);
          expect(v).toBeLessThanOrEqual(0xffffffff);
          expect(r.pos).toBeLessThanOrEqual(bytes.length);
        } catch (err) {
          expect(isSieveError(err, 'CORRUPTION')).toBe(true);
        }
      }),
    );
  });
});

describe('varint64', () => {
  it('round-trips integers up to 2^53 - 1', () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), (v) => {
        const dst = new Uint8Array(MAX_VARINT64_LENGTH);
        const end = putVarint64(dst, 0, v);
        expect(end).toBe(varint64Length(v));
        expect(new ByteReader(dst).varint64()).toBe(v);
      }),
    );
    for (const v of [0, 127, 128, 2 ** 32 - 1, 2 ** 32, 2 ** 35, Number.MAX_SAFE_INTEGER]) {
      const dst = new Uint8Array(MAX_VARINT64_LENGTH);
      expect(new ByteReader(dst, 0, putVarint64(dst, 0, v)).varint64()).toBe(v);
    }
  });

  it('writes 2^53 - 1 as LEB128 (8 groups of 7 bits = 56 bits: 8 bytes)', () => {
    const dst = new Uint8Array(10);
    expect(putVarint64(dst, 0, Number.MAX_SAFE_INTEGER)).toBe(8);
    expect([...dst.subarray(0, 8)]).toEqual([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f]);
  });

  it('rejects values it cannot represent exactly', () => {
    const dst = new Uint8Array(10);
    for (const v of [-1, 0.5, 2 ** 53, Infinity, NaN]) {
      expect(() => putVarint64(dst, 0, v)).toThrow(/INVALID_ARGUMENT/);
    }
    // 2^53 as a varint: CORRUPTION rather than a rounded number.
    const big = new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]);
    expectCorruption(() => new ByteReader(big).varint64());
    // 10 bytes of continuation, and 11 bytes: too long.
    expectCorruption(() => new ByteReader(new Uint8Array(11).fill(0x80)).varint64());
    expectCorruption(() => new ByteReader(new Uint8Array([0x80, 0x80])).varint64());
  });
});

describe('ByteReader', () => {
  it('reads fixed ints, bytes and length-prefixed slices within its limit', () => {
    const buf = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 3, 9, 9, 9, 42]);
    const r = new ByteReader(buf, 0, 16);
    expect(r.fixed32()).toBe(0x04030201);
    expect(r.fixed32()).toBe(0x08070605);
    r.skip(4);
    expect([...r.lengthPrefixed()]).toEqual([9, 9, 9]);
    expect(r.remaining).toBe(0);
    expectCorruption(() => r.byte());
    r.reset(buf, 16, 17);
    expect(r.byte()).toBe(42);
  });

  it('length-prefixed slices and byte runs past the limit are CORRUPTION', () => {
    const buf = new Uint8Array([5, 1, 2, 3]);
    expectCorruption(() => new ByteReader(buf).lengthPrefixed(), 0);
    expectCorruption(() => new ByteReader(buf).bytes(5));
    expectCorruption(() => new ByteReader(buf).skip(5));
    expectCorruption(() => new ByteReader(buf, 1).fixed32());
  });

  it('fixed64 above 2^53 - 1 is CORRUPTION', () => {
    const buf = new Uint8Array(8);
    buf[6] = 0x20;
    expectCorruption(() => new ByteReader(buf).fixed64());
    buf[6] = 0x1f;
    buf.fill(0xff, 0, 6);
    expect(new ByteReader(buf).fixed64()).toBe(Number.MAX_SAFE_INTEGER);
  });
});
