import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BYTEWISE_COMPARATOR_NAME,
  bytewiseComparator,
  compareBytes,
  compareWhole,
} from '../../src/format/comparator.js';

const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);
const ref = (a: Uint8Array, b: Uint8Array): number => sign(Buffer.compare(a, b));
const bytes = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));

/** Keys with long shared prefixes so the native tail of compareBytes is exercised too. */
const keyArb = fc.oneof(
  fc.uint8Array({ maxLength: 12 }),
  fc
    .tuple(fc.integer({ min: 0, max: 120 }), fc.uint8Array({ maxLength: 4 }), fc.constantFrom(0, 0xff, 7))
    .map(([n, tail, fill]) => {
      const k = new Uint8Array(n + tail.length).fill(fill);
      k.set(tail, n);
      return k;
    }),
);

describe('compareBytes', () => {
  it('is memcmp-then-length over any ranges (also past the native-compare prefix)', () => {
    fc.assert(
      fc.property(keyArb, keyArb, fc.nat(3), fc.nat(3), (a, b, pa, pb) => {
        // Embed the keys at offsets inside larger buffers with junk around them.
        const A = new Uint8Array(pa + a.length + 2).fill(0x55);
        A.set(a, pa);
        const B = new Uint8Array(pb + b.length + 2).fill(0xaa);
        B.set(b, pb);
        expect(sign(compareBytes(A, pa, pa + a.length, B, pb, pb + b.length))).toBe(ref(a, b));
        expect(sign(compareWhole(a, b))).toBe(ref(a, b));
        expect(compareBytes(A, pa, pa + a.length, A, pa, pa + a.length)).toBe(0);
      }),
    );
  });

  it('orders unsigned bytes and shorter-first on a shared prefix', () => {
    expect(compareWhole(bytes('a'), bytes('\x80'))).toBeLessThan(0);
    expect(compareWhole(bytes(''), bytes('\x00'))).toBeLessThan(0);
    expect(compareWhole(bytes('abc'), bytes('ab'))).toBeGreaterThan(0);
    const long = new Uint8Array(100).fill(1);
    const longer = new Uint8Array(101).fill(1);
    expect(compareWhole(long, longer)).toBeLessThan(0);
    longer[99] = 0;
    expect(compareWhole(long, longer)).toBeGreaterThan(0);
  });
});

describe('bytewiseComparator', () => {
  it('carries LevelDB\'s persisted name', () => {
    expect(bytewiseComparator.name).toBe('leveldb.BytewiseComparator');
    expect(BYTEWISE_COMPARATOR_NAME).toBe('leveldb.BytewiseComparator');
  });

  it('findShortestSeparator: LevelDB\'s cases', () => {
    const sep = (s: string, l: string): string =>
      String.fromCharCode(...bytewiseComparator.findShortestSeparator(bytes(s), bytes(l)));
    expect(sep('foo', 'hello')).toBe('g');
    expect(sep('foo', 'foobar')).toBe('foo'); // prefix: unchanged
    expect(sep('foobar', 'foo')).toBe('foobar');
    expect(sep('foo', 'bar')).toBe('foo'); // misordered: unchanged
    expect(sep('abc1', 'abc2')).toBe('abc1'); // start[d] + 1 == limit[d]: unchanged
    expect(sep('abc1xyz', 'abc3')).toBe('abc2');
    expect(sep('a\xff\xff', 'b')).toBe('a\xff\xff'); // 'a' + 1 == 'b': unchanged
    expect(sep('\xffa', '\xffc')).toBe('\xffb');
  });

  it('findShortestSeparator: start <= s < limit, never longer than start, inputs untouched', () => {
    fc.assert(
      fc.property(keyArb, keyArb, (x, y) => {
        const c = compareWhole(x, y);
        fc.pre(c !== 0);
        const [start, limit] = c < 0 ? [x, y] : [y, x];
        const startCopy = start.slice();
        const limitCopy = limit.slice();
        const s = bytewiseComparator.findShortestSeparator(start, limit);
        expect(compareWhole(start, s)).toBeLessThanOrEqual(0);
        expect(compareWhole(s, limit)).toBeLessThan(0);
        expect(s.length).toBeLessThanOrEqual(start.length);
        expect(start).toEqual(startCopy);
        expect(limit).toEqual(limitCopy);
      }),
    );
  });

  it('findShortSuccessor: LevelDB\'s cases and key <= s, never longer', () => {
    expect([...bytewiseComparator.findShortSuccessor(bytes('foo'))]).toEqual([...bytes('g')]);
    expect([...bytewiseComparator.findShortSuccessor(bytes('\xff\xff'))]).toEqual([0xff, 0xff]);
    expect([...bytewiseComparator.findShortSuccessor(bytes('\xff\x01\x02'))]).toEqual([0xff, 0x02]);
    expect([...bytewiseComparator.findShortSuccessor(bytes(''))]).toEqual([]);
    fc.assert(
      fc.property(keyArb, (k) => {
        const copy = k.slice();
        const s = bytewiseComparator.findShortSuccessor(k);
        expect(compareWhole(k, s)).toBeLessThanOrEqual(0);
        expect(s.length).toBeLessThanOrEqual(k.length);
        expect(k).toEqual(copy);
      }),
    );
  });
});
