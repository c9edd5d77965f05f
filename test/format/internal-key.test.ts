import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { putFixed64Parts } from '../../src/format/coding.js';
import { bytewiseComparator, compareWhole, type Comparator } from '../../src/format/comparator.js';
import {
  bytewiseInternalComparator,
  InternalKeyComparator,
} from '../../src/format/internal-key-comparator.js';
import {
  checkInternalKey,
  compareInternalKeys,
  encodeInternalKey,
  MAX_SEQUENCE,
  readSequence,
  readSequenceBigInt,
  readValueType,
  ValueType,
  writeTrailer,
} from '../../src/format/internal-key.js';

const bytes = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const MAX_SEQ_56 = (1n << 56n) - 1n;

/** LevelDB's IKey with any 56-bit sequence (BigInt, test-only), for the seek sentinel. */
function ikey(user: string | Uint8Array, seq: bigint, type: number): Uint8Array {
  const u = typeof user === 'string' ? bytes(user) : user;
  const out = new Uint8Array(u.length + 8);
  out.set(u);
  const packed = (seq << 8n) | BigInt(type);
  putFixed64Parts(out, u.length, Number(packed & 0xffffffffn), Number(packed >> 32n));
  return out;
}

/** The reference order: user key bytewise, then packed trailer descending (BigInt). */
function refCompare(a: Uint8Array, b: Uint8Array): number {
  const r = Buffer.compare(a.subarray(0, a.length - 8), b.subarray(0, b.length - 8));
  if (r !== 0) return r;
  const ta = Buffer.from(a.subarray(a.length - 8)).readBigUInt64LE();
  const tb = Buffer.from(b.subarray(b.length - 8)).readBigUInt64LE();
  return ta > tb ? -1 : ta < tb ? 1 : 0;
}
const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);

const userKeyArb = fc.uint8Array({ maxLength: 6, max: 3 });
const seqArb = fc.oneof(fc.integer({ min: 0, max: 300 }), fc.maxSafeNat());
const typeArb = fc.constantFrom(ValueType.DELETION, ValueType.VALUE);

describe('internal key encoding', () => {
  it('encodes and decodes LevelDB\'s FormatTest sequences exactly', () => {
    const seqs = [1, 2, 3, 255, 256, 257, 65535, 65536, 65537, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, MAX_SEQUENCE];
    for (const user of ['', 'k', 'hello', 'longggggggggggggggggggggg']) {
      for (const seq of seqs) {
        for (const type of [ValueType.VALUE, ValueType.DELETION]) {
          const k = encodeInternalKey(bytes(user), seq, type);
          expect(k).toEqual(ikey(user, BigInt(seq), type));
          checkInternalKey(k, 0, k.length);
          expect(readSequence(k, k.length)).toBe(seq);
          expect(readValueType(k, k.length)).toBe(type);
          expect(k.subarray(0, k.length - 8)).toEqual(bytes(user));
        }
      }
    }
  });

  it('refuses sequences and types it cannot write exactly', () => {
    const dst = new Uint8Array(8);
    for (const seq of [-1, 1.5, 2 ** 53, NaN]) {
      expect(() => writeTrailer(dst, 0, seq, ValueType.VALUE)).toThrow(/INVALID_ARGUMENT/);
    }
    expect(() => writeTrailer(dst, 0, 1, 2 as ValueType)).toThrow(/INVALID_ARGUMENT/);
  });

  it('reads LevelDB\'s 2^56 - 1 sentinel only as a BigInt; as a number it is CORRUPTION', () => {
    const k = ikey('g', MAX_SEQ_56, 1);
    expect(readSequenceBigInt(k, k.length)).toBe(MAX_SEQ_56);
    expect(() => readSequence(k, k.length, 'x.ldb', 7)).toThrow(/CORRUPTION.*x\.ldb/);
    checkInternalKey(k, 0, k.length);
  });

  it('checkInternalKey: too short or a bad type is CORRUPTION', () => {
    for (const bad of [bytes('bar'), ikey('a', 1n, 2), new Uint8Array(0)]) {
      try {
        checkInternalKey(bad, 0, bad.length, 'f.ldb', 12);
        expect.unreachable();
      } catch (err) {
        expect(isSieveError(err, 'CORRUPTION')).toBe(true);
        expect((err as { offset?: number }).offset).toBe(12);
      }
    }
  });
});

describe('internal key order', () => {
  it('user key ascending, then sequence descending, then type descending (BigInt model)', () => {
    const keyArb = fc.oneof(
      fc.tuple(userKeyArb, seqArb, typeArb).map(([u, s, t]) => encodeInternalKey(u, s, t)),
      userKeyArb.map((u) => ikey(u, MAX_SEQ_56, 1)),
    );
    fc.assert(
      fc.property(keyArb, keyArb, fc.nat(4), (a, b, pad) => {
        const B = new Uint8Array(pad + b.length);
        B.set(b, pad);
        const expected = sign(refCompare(a, b));
        expect(sign(compareInternalKeys(a, 0, a.length, B, pad, pad + b.length))).toBe(expected);
        expect(sign(bytewiseInternalComparator.compare(a, 0, a.length, b, 0, b.length))).toBe(expected);
      }),
    );
  });

  it('newer versions first; the sentinel sorts before every real version of its user key', () => {
    const a = encodeInternalKey(bytes('k'), 5, ValueType.VALUE);
    const b = encodeInternalKey(bytes('k'), 4, ValueType.VALUE);
    const c = encodeInternalKey(bytes('k'), 5, ValueType.DELETION);
    const cmp = (x: Uint8Array, y: Uint8Array): number => compareInternalKeys(x, 0, x.length, y, 0, y.length);
    expect(cmp(a, b)).toBeLessThan(0);
    expect(cmp(a, c)).toBeLessThan(0);
    expect(cmp(ikey('k', MAX_SEQ_56, 1), encodeInternalKey(bytes('k'), MAX_SEQUENCE, 1))).toBeLessThan(0);
    expect(cmp(encodeInternalKey(bytes('j'), 0, 0), ikey('k', MAX_SEQ_56, 1))).toBeLessThan(0);
  });

  it('malformed (short) keys order deterministically and never throw', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 10 }), fc.uint8Array({ maxLength: 10 }), (a, b) => {
        const r = compareInternalKeys(a, 0, a.length, b, 0, b.length);
        expect(sign(compareInternalKeys(b, 0, b.length, a, 0, a.length)) + sign(r)).toBe(0);
      }),
    );
  });
});

describe('InternalKeyComparator separators (dbformat_test.cc)', () => {
  const shorten = (s: Uint8Array, l: Uint8Array): Uint8Array => bytewiseInternalComparator.findShortestSeparator(s, l);
  const V = ValueType.VALUE;

  it('LevelDB\'s InternalKeyShortSeparator cases', () => {
    const foo100 = ikey('foo', 100n, V);
    expect(shorten(foo100, ikey('foo', 99n, V))).toEqual(foo100);
    expect(shorten(foo100, ikey('foo', 101n, V))).toEqual(foo100);
    expect(shorten(foo100, ikey('foo', 100n, V))).toEqual(foo100);
    expect(shorten(foo100, ikey('foo', 100n, ValueType.DELETION))).toEqual(foo100);
    expect(shorten(foo100, ikey('bar', 99n, V))).toEqual(foo100);
    expect(shorten(foo100, ikey('hello', 200n, V))).toEqual(ikey('g', MAX_SEQ_56, V));
    expect(shorten(foo100, ikey('foobar', 200n, V))).toEqual(foo100);
    expect(shorten(ikey('foobar', 100n, V), ikey('foo', 200n, V))).toEqual(ikey('foobar', 100n, V));
  });

  it('LevelDB\'s InternalKeyShortestSuccessor cases', () => {
    expect(bytewiseInternalComparator.findShortSuccessor(ikey('foo', 100n, V))).toEqual(ikey('g', MAX_SEQ_56, V));
    const ff = ikey('\xff\xff', 100n, V);
    expect(bytewiseInternalComparator.findShortSuccessor(ff)).toEqual(ff);
  });

  it('start <= separator < limit and successor >= key, for any internal keys', () => {
    const keyArb = fc.tuple(fc.uint8Array({ maxLength: 8 }), seqArb, typeArb).map(([u, s, t]) => encodeInternalKey(u, s, t));
    const cmp = (x: Uint8Array, y: Uint8Array): number => compareInternalKeys(x, 0, x.length, y, 0, y.length);
    fc.assert(
      fc.property(keyArb, keyArb, (x, y) => {
        const c = cmp(x, y);
        fc.pre(c !== 0);
        const [start, limit] = c < 0 ? [x, y] : [y, x];
        const s = shorten(start, limit);
        expect(cmp(start, s)).toBeLessThanOrEqual(0);
        expect(cmp(s, limit)).toBeLessThan(0);
        expect(s.length).toBeLessThanOrEqual(start.length);
        const succ = bytewiseInternalComparator.findShortSuccessor(start);
        expect(cmp(start, succ)).toBeLessThanOrEqual(0);
      }),
    );
  });

  it('wraps a custom user comparator (reverse order) through the generic path', () => {
    const reverse: Comparator = {
      name: 'test.Reverse',
      compare: (a, as, ae, b, bs, be) => bytewiseComparator.compare(b, bs, be, a, as, ae),
      findShortestSeparator: (s) => s,
      findShortSuccessor: (k) => k,
    };
    const icmp = new InternalKeyComparator(reverse);
    const a = encodeInternalKey(bytes('b'), 1, V);
    const b = encodeInternalKey(bytes('a'), 1, V);
    const a2 = encodeInternalKey(bytes('b'), 2, V);
    expect(icmp.compare(a, 0, a.length, b, 0, b.length)).toBeLessThan(0);
    expect(icmp.compare(a2, 0, a2.length, a, 0, a.length)).toBeLessThan(0);
    expect(icmp.findShortestSeparator(a, b)).toBe(a);
    expect(compareWhole(icmp.findShortSuccessor(a), a)).toBe(0);
  });
});
