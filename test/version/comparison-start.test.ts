/**
 * Version.comparisonStart: a lookup compares its key with a level's file bounds from the prefix
 * every bound there shares, or skips the level when the key sorts outside all of them. Checked
 * against whole-key comparisons over random levels whose keys share prefixes of any length
 * (db_bench's keys share ten bytes), and keys that are prefixes of the shared one or extend it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import type { FileMetaData } from '../../src/version/version-edit.js';
import { ABOVE_LEVEL, BELOW_LEVEL, compareUserKeyFrom, compareUserKeyTo, Version } from '../../src/version/version.js';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

function file(number: number, smallest: Uint8Array, largest: Uint8Array): FileMetaData {
  return { number, fileSize: 100, smallest: encodeInternalKey(smallest, 9, ValueType.VALUE), largest: encodeInternalKey(largest, 3, ValueType.VALUE) };
}

const compareBytes = (a: Uint8Array, b: Uint8Array): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Keys over a small alphabet behind a common stem, so that prefixes are shared and keys collide. */
const keyArb = (stem: Uint8Array): fc.Arbitrary<Uint8Array> =>
  fc
    .tuple(fc.nat({ max: stem.length }), fc.uint8Array({ maxLength: 4, min: 0x61, max: 0x63 }))
    .map(([keep, tail]) => Uint8Array.from([...stem.subarray(0, keep), ...tail]));

describe('Version.comparisonStart', () => {
  it('decides each range check as a whole-key comparison does (property)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 12, min: 0x61, max: 0x63 }).chain((stem) =>
          fc.tuple(fc.array(fc.tuple(keyArb(stem), keyArb(stem)), { minLength: 1, maxLength: 6 }), fc.array(keyArb(stem), { minLength: 1, maxLength: 20 })),
        ),
        ([bounds, probes]) => {
          const files = bounds.map(([a, b], i) => (compareBytes(a, b) <= 0 ? file(i + 1, a, b) : file(i + 1, b, a)));
          // Level 0 holds them as they come; level 1 would be sorted, but the prefix does not care.
          const version = new Version([[files, files, [], [], [], [], []]]);
          for (const key of probes) {
            for (const level of [0, 1]) {
              const from = version.comparisonStart(0, level, key);
              for (const f of files) {
                const inRange = compareUserKeyTo(key, f.smallest) >= 0 && compareUserKeyTo(key, f.largest) <= 0;
                if (from === BELOW_LEVEL) expect(compareUserKeyTo(key, f.smallest)).toBeLessThan(0);
                else if (from === ABOVE_LEVEL) expect(compareUserKeyTo(key, f.largest)).toBeGreaterThan(0);
                else {
                  expect(Math.sign(compareUserKeyFrom(key, f.smallest, from))).toBe(Math.sign(compareUserKeyTo(key, f.smallest)));
                  expect(Math.sign(compareUserKeyFrom(key, f.largest, from))).toBe(Math.sign(compareUserKeyTo(key, f.largest)));
                }
                if (from < 0) expect(inRange).toBe(false);
              }
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("skips db_bench's shared ten bytes, and a level whose keys share none compares from the start", () => {
    const dbBench = (n: number): Uint8Array => bytes(String(n).padStart(16, '0'));
    const version = new Version([
      [[file(1, dbBench(12), dbBench(999_987)), file(2, dbBench(40), dbBench(998_000))], [file(3, bytes('apple'), bytes('banana')), file(4, bytes('cherry'), bytes('date'))], [], [], [], [], []],
    ]);
    expect(version.comparisonStart(0, 0, dbBench(500_000))).toBe(10);
    expect(version.comparisonStart(0, 0, bytes('000000000'))).toBe(BELOW_LEVEL); // a prefix of the shared bytes
    expect(version.comparisonStart(0, 0, bytes('00000000001'))).toBe(10);
    expect(version.comparisonStart(0, 0, bytes('0000001000000000'))).toBe(ABOVE_LEVEL);
    expect(version.comparisonStart(0, 1, bytes('blueberry'))).toBe(0);
    expect(Version.findFileByUserKey(version.files(0, 1), bytes('blueberry'), 0)).toBe(1);
  });
});
