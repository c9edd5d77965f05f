import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32c as nativeCrc32c } from '@node-rs/crc32';
import { crc32c, crc32cExtendByte, maskCrc, unmaskCrc } from '../../src/format/crc32c.js';

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('crc32c', () => {
  it('matches the RFC 3720 B.4 vectors LevelDB tests (crc32c_test.cc)', () => {
    const buf = new Uint8Array(32);
    expect(crc32c(buf)).toBe(0x8a9136aa);
    buf.fill(0xff);
    expect(crc32c(buf)).toBe(0x62a8ab43);
    for (let i = 0; i < 32; i++) buf[i] = i;
    expect(crc32c(buf)).toBe(0x46dd794e);
    for (let i = 0; i < 32; i++) buf[i] = 31 - i;
    expect(crc32c(buf)).toBe(0x113fdb5c);
    const data = new Uint8Array([
      0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
      0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ]);
    expect(crc32c(data)).toBe(0xd9963a56);
    expect(crc32c(ascii('123456789'))).toBe(0xe3069283);
  });

  it('the same vectors through the native path (long inputs) and sub-ranges', () => {
    const big = new Uint8Array(300);
    big.set(ascii('123456789'), 100);
    expect(crc32c(big, 100, 109)).toBe(0xe3069283);
    const zeros = new Uint8Array(32 + 200);
    expect(crc32c(zeros, 200, 232)).toBe(0x8a9136aa);
    expect(crc32c(ascii('a'))).not.toBe(crc32c(ascii('foo')));
  });

  it('extends: crc(a ‖ b) = crc(b, init = crc(a))', () => {
    expect(crc32c(ascii('world'), 0, 5, crc32c(ascii('hello ')))).toBe(crc32c(ascii('hello world')));
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 300 }), (a, b) => {
        const ab = new Uint8Array(a.length + b.length);
        ab.set(a);
        ab.set(b, a.length);
        const whole = crc32c(ab);
        expect(crc32c(b, 0, b.length, crc32c(a))).toBe(whole);
        expect(crc32c(ab, a.length, ab.length, crc32c(ab, 0, a.length))).toBe(whole);
      }),
    );
  });

  it('the JS table path and the native path agree at every length around the threshold', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 600 }), fc.integer({ min: 0, max: 0xffffffff }), fc.nat(7), (bytes, init, skip) => {
        // Byte by byte always takes the one-table JS step; the whole range (at an offset, so the
        // 8-byte steps start anywhere) takes the 8-byte JS loop below the native threshold (96
        // bytes with sievekv's addon, 256 with @node-rs/crc32: test/native/addon.test.ts runs
        // the latter), native above.
        let c = init >>> 0;
        for (const b of bytes) c = crc32cExtendByte(c, b);
        const padded = new Uint8Array(skip + bytes.length);
        padded.set(bytes, skip);
        expect(crc32c(padded, skip, padded.length, init >>> 0)).toBe(c);
        expect(nativeCrc32c(Buffer.from(bytes), init >>> 0) >>> 0).toBe(c);
      }),
      { numRuns: 300 },
    );
  });

  it('mask / unmask (crc32c_test.cc Mask)', () => {
    const crc = crc32c(ascii('foo'));
    expect(maskCrc(crc)).not.toBe(crc);
    expect(maskCrc(maskCrc(crc))).not.toBe(crc);
    expect(unmaskCrc(maskCrc(crc))).toBe(crc);
    expect(unmaskCrc(unmaskCrc(maskCrc(maskCrc(crc))))).toBe(crc);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (v) => {
        expect(unmaskCrc(maskCrc(v))).toBe(v);
        expect(maskCrc(v)).toBe(Number(((BigInt(v) >> 15n) | ((BigInt(v) << 17n) & 0xffffffffn)) + 0xa282ead8n & 0xffffffffn));
      }),
    );
  });
});
