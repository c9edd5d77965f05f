/**
 * How the CLI spells bytes: hex round trips, and the printable-or-hex choice for people.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatSize, fromHex, printableText, showBytes, toHex } from '../../src/tools/format-bytes.js';

describe('format-bytes', () => {
  it('toHex and fromHex round-trip any bytes; toHex agrees with Buffer', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        expect(toHex(bytes)).toBe(Buffer.from(bytes).toString('hex'));
        expect(fromHex(toHex(bytes), 'k')).toEqual(bytes);
        expect(fromHex(toHex(bytes).toUpperCase(), 'k')).toEqual(bytes);
      }),
    );
  });

  it('fromHex refuses odd lengths and non-hex digits', () => {
    for (const bad of ['a', 'abc', 'zz', '0x12', 'ab cd']) expect(() => fromHex(bad, 'KEY')).toThrow(/KEY is not hex/);
  });

  it('printable UTF-8 shows as quoted text; controls, invalid UTF-8 and bidi overrides as 0x-hex', () => {
    const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
    expect(showBytes(enc('user:42'))).toBe('"user:42"');
    expect(showBytes(enc('tab\there'))).toBe('"tab\\there"');
    expect(showBytes(enc('naïve 東京'))).toBe('"naïve 東京"');
    expect(showBytes(enc('say "hi"'))).toBe('"say \\"hi\\""');
    expect(showBytes(new Uint8Array(0))).toBe('""');
    expect(showBytes(new Uint8Array([0]))).toBe('0x00');
    expect(showBytes(enc('line\n'))).toBe('0x6c696e650a');
    expect(showBytes(new Uint8Array([0xc3, 0x28]))).toBe('0xc328'); // invalid UTF-8
    expect(showBytes(new Uint8Array([0x7f]))).toBe('0x7f');
    expect(printableText(enc('a\u202eb'))).toBeUndefined();
    expect(printableText(enc('\u0085'))).toBeUndefined(); // C1 control
  });

  it('every byte string is shown either as valid JSON text or as 0x-hex of exactly its bytes', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 32 }), fc.string({ unit: 'grapheme', maxLength: 16 }).map((s) => new TextEncoder().encode(s))), (bytes) => {
        const shown = showBytes(bytes);
        if (shown.startsWith('0x')) expect(fromHex(shown.slice(2), 'x')).toEqual(bytes);
        else expect(new TextEncoder().encode(JSON.parse(shown) as string)).toEqual(bytes);
      }),
    );
  });

  it('formatSize: exact bytes below 10 KiB, one decimal above', () => {
    expect(formatSize(0)).toBe('0 B');
    expect(formatSize(10 * 1024 - 1)).toBe('10239 B');
    expect(formatSize(10 * 1024)).toBe('10.0 KiB');
    expect(formatSize(3.5 * 1024 * 1024)).toBe('3.5 MiB');
  });
});
