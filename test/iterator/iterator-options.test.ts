import { describe, expect, it } from 'vitest';
import { resolveIteratorOptions } from '../../src/iterator/iterator-options.js';
import { toBytes } from '../../src/key-encoding.js';

const invalid = expect.objectContaining({ code: 'INVALID_ARGUMENT' });

describe('resolveIteratorOptions', () => {
  it('an unknown option is INVALID_ARGUMENT (a misspelt bound would widen the range silently)', () => {
    for (const o of [{ somethingElse: 1 }, { lte: 'a', lessThan: 'b' }, { keys: false }]) {
      expect(() => resolveIteratorOptions(o)).toThrow(/unknown iterator option/);
    }
  });

  it('defaults: unbounded, forward, unlimited', () => {
    for (const o of [undefined, {}, { snapshot: {} }]) {
      expect(resolveIteratorOptions(o)).toEqual({
        lower: null,
        lowerInclusive: true,
        upper: null,
        upperInclusive: true,
        reverse: false,
        limit: Infinity,
        values: true,
        copy: true,
      });
    }
  });

  it('maps gt/gte/lt/lte to bounds, strings as UTF-8, as owned copies', () => {
    const mine = Uint8Array.of(1, 2);
    const r = resolveIteratorOptions({ gt: 'é', lte: mine, reverse: true, limit: 3 });
    expect([...r.lower!]).toEqual([0xc3, 0xa9]);
    expect(r.lowerInclusive).toBe(false);
    expect([...r.upper!]).toEqual([1, 2]);
    expect(r.upperInclusive).toBe(true);
    mine[0] = 9;
    expect([...r.upper!]).toEqual([1, 2]);
    expect(r.reverse).toBe(true);
    expect(r.limit).toBe(3);
    const s = resolveIteratorOptions({ gte: Buffer.from('a'), lt: 'b' });
    expect([s.lowerInclusive, s.upperInclusive]).toEqual([true, false]);
    expect(resolveIteratorOptions({ limit: -1 }).limit).toBe(Infinity);
    expect(resolveIteratorOptions({ limit: Infinity }).limit).toBe(Infinity);
    expect(resolveIteratorOptions({ limit: 0 }).limit).toBe(0);
    expect(resolveIteratorOptions({ values: false }).values).toBe(false);
  });

  it('given both, gte wins over gt and lte over lt (Level), whichever is wider', () => {
    for (const [gt, gte] of [['7', '5'], ['3', '5']]) {
      const r = resolveIteratorOptions({ gt, gte, lt: gt, lte: gte });
      expect([Buffer.from(r.lower!).toString(), r.lowerInclusive]).toEqual([gte, true]);
      expect([Buffer.from(r.upper!).toString(), r.upperInclusive]).toEqual([gte, true]);
    }
    // The losing bound is still checked.
    expect(() => resolveIteratorOptions({ gt: 5, gte: 'a' })).toThrow(invalid);
    expect(() => resolveIteratorOptions({ lt: 5, lte: 'a' })).toThrow(invalid);
  });

  it('rejects bad input with INVALID_ARGUMENT', () => {
    const bad: unknown[] = [
      null,
      'gte',
      42,
      { gte: 1 },
      { lt: null },
      { lte: ['a'] },
      { gt: new Uint16Array(2) },
      { reverse: 'yes' },
      { values: 0 },
      { limit: -2 },
      { limit: 1.5 },
      { limit: Number.NaN },
      { limit: '3' },
    ];
    for (const o of bad) expect(() => resolveIteratorOptions(o), JSON.stringify(o)).toThrow(invalid);
  });
});

describe('toBytes', () => {
  it('passes bytes through, encodes strings as UTF-8, rejects the rest', () => {
    const b = Uint8Array.of(1);
    expect(toBytes(b, 'key')).toBe(b);
    expect([...toBytes('€', 'key')]).toEqual([0xe2, 0x82, 0xac]);
    for (const x of [undefined, null, 1, {}, [1], new ArrayBuffer(2), new DataView(new ArrayBuffer(1))]) {
      expect(() => toBytes(x, 'key')).toThrow(invalid);
    }
  });
});
