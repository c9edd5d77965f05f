/**
 * The WebAssembly block seek of a point lookup's block (src/sstable/block-seek-wasm.ts, through
 * lz4-wasm.ts's seekLookupBlock): it finds what BlockIterator.seek finds (the model) on blocks of
 * any restart interval, keys sharing long prefixes, user keys that are prefixes of others, equal
 * user keys at several sequences, and lengths that take multi-byte varints; and on damaged bytes it
 * never throws: where the iterator reports damage in a block that was read (its restart array
 * checked) it declines (the iterator then seeks and throws), and where the iterator answers it
 * declines or answers alike.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytewiseInternalComparator } from '../../src/format/internal-key-comparator.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { Block } from '../../src/sstable/block.js';
import { BlockBuilder } from '../../src/sstable/block-builder.js';
import { TARGET_MAX } from '../../src/sstable/block-seek-wasm.js';
import {
  LOOKUP_OUTPUT_START,
  lz4WasmDecoder,
  SEEK_DECLINED,
  SEEK_ENTRY,
  SEEK_FOUND,
  SEEK_KEY_LENGTH,
  SEEK_NONE,
  SEEK_USER_KEY_EQUAL,
  SEEK_VALUE_END,
  SEEK_VALUE_START,
  seekLookupBlock,
} from '../../src/sstable/lz4-wasm.js';

const cmp = bytewiseInternalComparator;
const compareKeys = (a: Uint8Array, b: Uint8Array): number => cmp.compare(a, 0, a.length, b, 0, b.length);
const wasm = lz4WasmDecoder()!;

/**
 * User keys over a small alphabet after a common stem: long shared prefixes, prefixes of each
 * other, and bytes 0 and 1, which a trailer's first byte (the value type) can equal.
 */
const ALPHABET = [0x00, 0x01, 0x30, 0x31, 0xff];
const userKeyArb = fc
  .tuple(fc.constantFrom('', 'k', 'key0000000', 'x'.repeat(140)), fc.uint8Array({ maxLength: 10, max: ALPHABET.length - 1 }))
  .map(([stem, tail]) => Uint8Array.from([...Buffer.from(stem), ...tail.map((b) => ALPHABET[b]!)]));
const internalKeyArb = fc.tuple(userKeyArb, fc.integer({ min: 0, max: 300 }), fc.constantFrom(ValueType.VALUE, ValueType.DELETION));

/** A block of `entries` (sorted, unique) with values of 0-200 bytes, and its keys in order. */
function buildBlock(entries: [Uint8Array, number, ValueType][], interval: number, valueLength: number): { bytes: Uint8Array; keys: Uint8Array[] } {
  const keys = [...new Map(entries.map(([u, s, t]) => encodeInternalKey(u, s, t)).map((k) => [Buffer.from(k).toString('hex'), k])).values()].sort(compareKeys);
  const builder = new BlockBuilder(interval);
  keys.forEach((k, i) => builder.add(k, new Uint8Array((valueLength + i) % 201).fill(i & 0xff)));
  return { bytes: builder.finish().slice(), keys };
}

/** Places `bytes` where a lookup's block lies and seeks `target` there. */
function seekInWasm(bytes: Uint8Array, target: Uint8Array): number {
  wasm.bytes.set(bytes, LOOKUP_OUTPUT_START);
  return seekLookupBlock(wasm.output, bytes.length, target);
}

/** The iterator's answer (the model): the entry's offset, key and value range, or null; throws on damage. */
function seekWithIterator(bytes: Uint8Array, target: Uint8Array): { entry: number; key: Buffer; valueStart: number; valueEnd: number } | null {
  const it = new Block(bytes).newIterator(cmp);
  it.seek(target);
  if (!it.valid()) return null;
  const entry = (it as unknown as { current: number }).current;
  return { entry, key: Buffer.from(it.key()), valueStart: it.valueStart, valueEnd: it.valueEnd };
}

function wasmAnswer(): { entry: number; key: Buffer; valueStart: number; valueEnd: number } {
  const r = wasm.result;
  return {
    entry: r[SEEK_ENTRY]!,
    key: Buffer.from(wasm.bytes.subarray(wasm.keyAt, wasm.keyAt + r[SEEK_KEY_LENGTH]!)),
    valueStart: r[SEEK_VALUE_START]!,
    valueEnd: r[SEEK_VALUE_END]!,
  };
}

describe('block seek in WebAssembly', () => {
  it('finds what the block iterator finds, in blocks of any restart interval', () => {
    fc.assert(
      fc.property(
        fc.array(internalKeyArb, { minLength: 1, maxLength: 60 }),
        fc.constantFrom(1, 2, 3, 16),
        fc.nat(200),
        fc.array(internalKeyArb, { minLength: 1, maxLength: 30 }),
        (entries, interval, valueLength, targets) => {
          const { bytes, keys } = buildBlock(entries, interval, valueLength);
          // Targets: drawn ones, every key of the block, and its user keys one sequence above.
          const all = [
            ...targets.map(([u, s, t]) => encodeInternalKey(u, s, t)),
            ...keys,
            ...entries.map(([u, s]) => encodeInternalKey(u, s + 1, ValueType.VALUE)),
          ];
          for (const target of all) {
            const expected = seekWithIterator(bytes, target);
            const answer = seekInWasm(bytes, target);
            if (expected === null) {
              expect(answer).toBe(SEEK_NONE);
              continue;
            }
            expect(answer).toBe(SEEK_FOUND);
            expect(wasmAnswer()).toEqual(expected);
            const userEqual = Buffer.from(expected.key.subarray(0, -8)).equals(Buffer.from(target.subarray(0, -8)));
            expect(wasm.result[SEEK_USER_KEY_EQUAL]).toBe(userEqual ? 1 : 0);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('declines where the iterator reports damage, and answers alike or declines elsewhere', () => {
    fc.assert(
      fc.property(
        fc.array(internalKeyArb, { minLength: 1, maxLength: 40 }),
        fc.constantFrom(1, 2, 16),
        fc.array(fc.tuple(fc.nat(), fc.nat(255)), { minLength: 1, maxLength: 6 }),
        fc.nat(),
        internalKeyArb,
        (entries, interval, flips, cut, [u, s, t]) => {
          const { bytes } = buildBlock(entries, interval, 130);
          const damaged = bytes.slice(0, bytes.length - (cut % 4 === 0 ? cut % bytes.length : 0));
          for (const [at, value] of flips) if (damaged.length > 0) damaged[at % damaged.length] = value;
          const target = encodeInternalKey(u, s, t);
          // A block whose restart array is out of range or order is refused when it is read
          // (Block's constructor), before any seek.
          try {
            new Block(damaged);
          } catch {
            return;
          }
          let expected: ReturnType<typeof seekWithIterator> | 'damage';
          try {
            expected = seekWithIterator(damaged, target);
          } catch {
            expected = 'damage';
          }
          const answer = seekInWasm(damaged, target);
          if (expected === 'damage' || answer === SEEK_DECLINED) {
            if (expected === 'damage') expect(answer).toBe(SEEK_DECLINED);
            return;
          }
          if (expected === null) expect(answer).toBe(SEEK_NONE);
          else {
            expect(answer).toBe(SEEK_FOUND);
            expect(wasmAnswer()).toEqual(expected);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('declines a block that is not the lookup output, and a target past TARGET_MAX', () => {
    const { bytes } = buildBlock([[Uint8Array.of(0x61), 1, ValueType.VALUE]], 16, 3);
    expect(seekLookupBlock(bytes, bytes.length, encodeInternalKey(Uint8Array.of(0x61), 1, ValueType.VALUE))).toBe(SEEK_DECLINED);
    expect(seekInWasm(bytes, encodeInternalKey(new Uint8Array(TARGET_MAX), 1, ValueType.VALUE))).toBe(SEEK_DECLINED);
    expect(seekInWasm(bytes, encodeInternalKey(Uint8Array.of(0x61), 1, ValueType.VALUE))).toBe(SEEK_FOUND);
  });
});
