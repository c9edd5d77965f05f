/**
 * The WebAssembly block seek of a point lookup's block (src/sstable/block-seek-wasm.ts, through
 * src/sstable/lookup-seek.ts): it finds what BlockIterator.seek finds (the model) on blocks of
 * any restart interval, keys sharing long prefixes, user keys that are prefixes of others, equal
 * user keys at several sequences, trailers of any bytes, and lengths that take multi-byte
 * varints; it takes keys and targets up to its limits and declines past them; and on damaged
 * bytes it never throws: where the iterator reports damage in a block that was read (its restart
 * array checked) it declines (the iterator then seeks and throws), and where the iterator answers
 * it declines or answers alike.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytewiseInternalComparator } from '../../src/format/internal-key-comparator.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { Block } from '../../src/sstable/block.js';
import { BlockBuilder } from '../../src/sstable/block-builder.js';
import { SEEK_KEY_MAX, TARGET_MAX } from '../../src/sstable/block-seek-wasm.js';
import { lookupFound, SEEK_DECLINED, SEEK_FOUND, SEEK_NONE, seekLookupBlock } from '../../src/sstable/lookup-seek.js';
import { LOOKUP_OUTPUT_START, lz4WasmDecoder } from '../../src/sstable/lz4-wasm.js';

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
/** Sequences small and large: every byte of a trailer takes part in the order. */
const sequenceArb = fc.oneof(fc.integer({ min: 0, max: 300 }), fc.constantFrom(2 ** 24, 2 ** 32 + 1, 2 ** 40, 2 ** 48 - 1, 2 ** 53 - 1));
/** An internal key: a user key and a trailer, mostly of a sequence and a type, else any 8 bytes (a top byte over 0x7f included). */
const internalKeyArb = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(userKeyArb, sequenceArb, fc.constantFrom(ValueType.VALUE, ValueType.DELETION)).map(([u, s, t]) => encodeInternalKey(u, s, t)) },
  { weight: 1, arbitrary: fc.tuple(userKeyArb, fc.uint8Array({ minLength: 8, maxLength: 8 })).map(([u, trailer]) => Uint8Array.from([...u, ...trailer])) },
);

/** A block of `entries` (sorted, unique) with values of 0-200 bytes, and its keys in order. */
function buildBlock(entries: Uint8Array[], interval: number, valueLength: number): { bytes: Uint8Array; keys: Uint8Array[] } {
  const keys = [...new Map(entries.map((k) => [Buffer.from(k).toString('hex'), k])).values()].sort(compareKeys);
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
  const found = lookupFound;
  return {
    entry: found.entry,
    key: Buffer.from(found.bytes.subarray(found.keyStart, found.keyStart + found.keyLength)),
    valueStart: found.valueStart,
    valueEnd: found.valueEnd,
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
          // Targets: drawn ones, every key of the block, and its user keys at the highest sequence.
          const all = [...targets, ...keys, ...keys.map((k) => encodeInternalKey(k.subarray(0, k.length - 8), 2 ** 53 - 1, ValueType.VALUE))];
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
            expect(lookupFound.userKeyEqual).toBe(userEqual);
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
        (entries, interval, flips, cut, target) => {
          const { bytes } = buildBlock(entries, interval, 130);
          const damaged = bytes.slice(0, bytes.length - (cut % 4 === 0 ? cut % bytes.length : 0));
          for (const [at, value] of flips) if (damaged.length > 0) damaged[at % damaged.length] = value;
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

  it('declines a block that is not the lookup output, and a target past TARGET_MAX bytes', () => {
    const key = encodeInternalKey(Uint8Array.of(0x61), 1, ValueType.VALUE);
    const { bytes } = buildBlock([key], 16, 3);
    expect(seekLookupBlock(bytes, bytes.length, key)).toBe(SEEK_DECLINED);
    // User keys of 'z's, after the block's one key: the longest target taken finds nothing.
    expect(seekInWasm(bytes, encodeInternalKey(new Uint8Array(TARGET_MAX - 8).fill(0x7a), 1, ValueType.VALUE))).toBe(SEEK_NONE);
    expect(seekInWasm(bytes, encodeInternalKey(new Uint8Array(TARGET_MAX - 7).fill(0x7a), 1, ValueType.VALUE))).toBe(SEEK_DECLINED);
    expect(seekInWasm(bytes, key)).toBe(SEEK_FOUND);
  });

  it('takes keys of up to SEEK_KEY_MAX bytes and declines a region with a longer one', () => {
    const longUser = (length: number): Uint8Array => new Uint8Array(length).fill(0x61).fill(0x62, length - 1);
    const short = encodeInternalKey(Uint8Array.of(0x61), 1, ValueType.VALUE);
    const after = encodeInternalKey(Uint8Array.of(0x62), 1, ValueType.VALUE); // sorts after both keys
    for (const length of [SEEK_KEY_MAX, SEEK_KEY_MAX + 1, 5000]) {
      // The long key second in its region, after a short one it shares a byte with.
      const long = encodeInternalKey(longUser(length - 8), 1, ValueType.VALUE);
      const { bytes } = buildBlock([short, long], 16, 3);
      if (length <= SEEK_KEY_MAX) {
        expect(seekInWasm(bytes, long)).toBe(SEEK_FOUND); // the long key built and compared
        expect(wasmAnswer()).toEqual(seekWithIterator(bytes, long));
        expect(seekInWasm(bytes, after)).toBe(SEEK_NONE);
      } else {
        expect(seekInWasm(bytes, after)).toBe(SEEK_DECLINED);
      }
    }
  });

  it('declines a varint past 32 bits and a restart key shorter than a trailer, where the iterator finds damage', () => {
    const target = encodeInternalKey(Uint8Array.of(0x61), 1, ValueType.VALUE);
    const fixed32 = (n: number): number[] => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24];
    // One entry whose key length is a five-byte varint with a fifth byte over 0x0f; one restart.
    const badVarint = Uint8Array.from([0, 0x88, 0x80, 0x80, 0x80, 0x10, 0, ...fixed32(0), ...fixed32(1)]);
    expect(() => seekWithIterator(badVarint, target)).toThrow();
    expect(seekInWasm(badVarint, target)).toBe(SEEK_DECLINED);
    // A 9-byte key, then a restart entry of a 3-byte key, which the binary search reads first.
    const first = [0, 9, 0, 0x61, 1, 1, 0, 0, 0, 0, 0, 0];
    const second = [0, 3, 0, 0x62, 0x62, 0x62];
    const shortRestartKey = Uint8Array.from([...first, ...second, ...fixed32(0), ...fixed32(first.length), ...fixed32(2)]);
    expect(seekInWasm(shortRestartKey, target)).toBe(SEEK_DECLINED);
  });
});
