import { createRequire } from 'node:module';
import fc from 'fast-check';
import murmurhash from 'murmurhash';
import { describe, expect, it } from 'vitest';
import { levelDBHash, levelDBHashRange } from '../../src/filter/leveldb-hash.js';
import { murmur2, murmur2Cassandra, murmur2Range } from '../../src/filter/murmur2.js';
import {
  murmur3_x64_128,
  murmur3_x64_128Into,
  murmur3_x86_32,
  murmur3_x86_32Range,
} from '../../src/filter/murmur3.js';
import { readJsonLines } from '../support/fixtures.js';

// murmurhash3js-revisited ships no types: describe the two functions used here.
interface MurmurHash3js {
  x86: { hash32(bytes: Uint8Array, seed?: number): number };
  x64: { hash128(bytes: Uint8Array, seed?: number): string };
}
const mm3js = createRequire(import.meta.url)('murmurhash3js-revisited') as MurmurHash3js;

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const hex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'hex'));

/** murmurhash3js-revisited prints h1 then h2, each as 16 hex digits (big-endian digits). */
function x64Hex(data: Uint8Array, seed: number): string {
  const [h1, h2] = murmur3_x64_128(data, seed);
  return h1.toString(16).padStart(16, '0') + h2.toString(16).padStart(16, '0');
}

/**
 * SMHasher's VerificationTest (KeysetTest.cpp): hash the keys {}, {0}, {0,1}, … {0..254} (key i
 * is the first i bytes of 0,1,2,…) with seed 256 − i, write each result little-endian into one
 * buffer, hash that buffer with seed 0 and read the first 4 bytes of the result little-endian.
 */
function smhasherVerification(hashBytes: number, hash: (data: Uint8Array, seed: number) => Uint8Array): number {
  const key = new Uint8Array(256);
  const hashes = new Uint8Array(256 * hashBytes);
  for (let i = 0; i < 256; i++) {
    key[i] = i;
    hashes.set(hash(key.subarray(0, i), 256 - i), i * hashBytes);
  }
  const final = hash(hashes, 0);
  return new DataView(final.buffer, final.byteOffset).getUint32(0, true);
}

function le32(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value, true);
  return out;
}

const bytesArb = fc.uint8Array({ maxLength: 100, size: 'max' });
const seedArb = fc.integer({ min: 0, max: 0xffffffff });

describe('murmur3_x86_32', () => {
  it("matches SMHasher's published verification value 0xB0F57EE3", () => {
    expect(smhasherVerification(4, (d, s) => le32(murmur3_x86_32(d, s)))).toBe(0xb0f57ee3);
  });

  it('matches published vectors (Ian Boyd, stackoverflow.com/a/31929528; Bitcoin hash_tests.cpp)', () => {
    const cases: [Uint8Array, number, number][] = [
      [hex(''), 0, 0],
      [hex(''), 1, 0x514e28b7],
      [hex(''), 0xffffffff, 0x81f16f39],
      [hex('ffffffff'), 0, 0x76293b50],
      [hex('21436587'), 0, 0xf55b516b],
      [hex('21436587'), 0x5082edee, 0x2362f9de],
      [hex('214365'), 0, 0x7e4a8634],
      [hex('2143'), 0, 0xa0f7b07a],
      [hex('21'), 0, 0x72661cf4],
      [hex('00000000'), 0, 0x2362f9de],
      [hex('000000'), 0, 0x85f0b427],
      [hex('0000'), 0, 0x30f4c306],
      [hex('00'), 0, 0x514e28b7],
      [utf8('aaaa'), 0x9747b28c, 0x5a97808a],
      [utf8('aaa'), 0x9747b28c, 0x283e0130],
      [utf8('aa'), 0x9747b28c, 0x5d211726],
      [utf8('a'), 0x9747b28c, 0x7fa09ea6],
      [utf8('abcd'), 0x9747b28c, 0xf0478627],
      [utf8('abc'), 0x9747b28c, 0xc84a62dd],
      [utf8('ab'), 0x9747b28c, 0x74875592],
      [utf8('Hello, world!'), 0x9747b28c, 0x24884cba],
      [utf8('The quick brown fox jumps over the lazy dog'), 0x9747b28c, 0x2fa826cd],
      [hex(''), 0xfba4c795, 0x6a396f08],
      [hex('00'), 0xfba4c795, 0xea3f0b17],
      [hex('ff'), 0, 0xfd6cf10d],
      [hex('001122334455667788'), 0, 0xb4698def],
      // murmurhash3js-revisited's README/test values, computed with the reference C++ code.
      [utf8('I will not buy this record, it is scratched.'), 0, 2832214938],
      [utf8('My hovercraft is full of eels.'), 25, 2520298415],
      [utf8('utf-8 supported 🌈'), 0, 2018897981],
      [utf8('這個有效'), 0, 3018595841],
    ];
    for (const [data, seed, expected] of cases) expect(murmur3_x86_32(data, seed)).toBe(expected);
  });

  it('agrees with murmurhash3js-revisited on random bytes and seeds', () => {
    fc.assert(
      fc.property(bytesArb, seedArb, (data, seed) => {
        expect(murmur3_x86_32(data, seed)).toBe(mm3js.x86.hash32(data, seed));
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees with murmurhash (v3) on random bytes and seeds', () => {
    fc.assert(
      fc.property(bytesArb, seedArb, (data, seed) => {
        expect(murmur3_x86_32(data, seed)).toBe(murmurhash.v3(data, seed));
      }),
      { numRuns: 1000 },
    );
  });

  it('hashes exactly the [start, end) sub-range', () => {
    fc.assert(
      fc.property(bytesArb, fc.nat(), fc.nat(), seedArb, (data, a, b, seed) => {
        const start = a % (data.length + 1);
        const end = start + (b % (data.length - start + 1));
        expect(murmur3_x86_32Range(data, start, end, seed)).toBe(murmur3_x86_32(data.slice(start, end), seed));
      }),
    );
  });
});

describe('murmur3_x64_128', () => {
  it("matches SMHasher's published verification value 0x6384BA69", () => {
    const out = new Uint32Array(4);
    const hash = (d: Uint8Array, s: number): Uint8Array => {
      murmur3_x64_128Into(d, 0, d.length, s, out);
      // [h1lo, h1hi, h2lo, h2hi] as little-endian words is the reference's 16 output bytes.
      const bytes = new Uint8Array(16);
      const view = new DataView(bytes.buffer);
      for (let w = 0; w < 4; w++) view.setUint32(w * 4, out[w]!, true);
      return bytes;
    };
    expect(smhasherVerification(16, hash)).toBe(0x6384ba69);
  });

  it("matches murmurhash3js-revisited's published vectors (from the reference C++ code)", () => {
    const cases: [string, number, string][] = [
      ['I will not buy this record, it is scratched.', 0, 'c382657f9a06c49d4a71fdc6d9b0d48f'],
      ["I will not buy this tobacconist's, it is scratched.", 0, 'd30654abbd8227e367d73523f0079673'],
      ['My hovercraft is full of eels.', 0, '03e5e14d358c16d1e5ae86df7ed5cfcb'],
      ['My hovercraft is full of eels.', 25, 'e85cec5bbbe05ddefccbf1b933fff845'],
      ['My hovercraft is full of eels.', 128, '898223700c20009cf8b163b4519c7a35'],
      ['', 0, '00000000000000000000000000000000'],
      ['0', 0, '2ac9debed546a3803a8de9e53c875e09'],
      ['01', 0, '649e4eaa7fc1708ee6945110230f2ad6'],
      ['012', 0, 'ce68f60d7c353bdb00364cd5936bf18a'],
      ['0123', 0, '0f95757ce7f38254b4c67c9e6f12ab4b'],
      ['01234', 0, '0f04e459497f3fc1eccc6223a28dd613'],
      ['012345', 0, '88c0a92586be0a2781062d6137728244'],
      ['0123456', 0, '13eb9fb82606f7a6b4ebef492fdef34e'],
      ['01234567', 0, '8236039b7387354dc3369387d8964920'],
      ['012345678', 0, '4c1e87519fe738ba72a17af899d597f1'],
      ['0123456789', 0, '3f9652ac3effeb248027a17cf2990b07'],
      ['0123456789a', 0, '4bc3eacd29d386297cb2d9e797da9c92'],
      ['0123456789ab', 0, '66352b8cee9e3ca7a9edf0b381a8fc58'],
      ['0123456789abc', 0, '5eb2f8db4265931e801ce853e61d0ab7'],
      ['0123456789abcd', 0, '07a4a014dd59f71aaaf437854cd22231'],
      ['0123456789abcde', 0, 'a62dd5f6c0bf23514fccf50c7c544cf0'],
      ['0123456789abcdef', 0, '4be06d94cf4ad1a787c35b5c63a708da'],
      ['', 1, '4610abe56eff5cb551622daa78f83583'],
      ['utf-8 supported 🌈', 0, '61dacbe7a7080feea406afcde9477eed'],
      ['這個有效', 0, 'a5df1c1a469c566b03c818b95419ed65'],
    ];
    for (const [text, seed, expected] of cases) expect(x64Hex(utf8(text), seed)).toBe(expected);
  });

  it('agrees with murmurhash3js-revisited on random bytes and seeds', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80, size: 'max' }), seedArb, (data, seed) => {
        expect(x64Hex(data, seed)).toBe(mm3js.x64.hash128(data, seed));
      }),
      { numRuns: 2000 },
    );
  });

  it('the Into variant writes [h1lo, h1hi, h2lo, h2hi] and honours [start, end)', () => {
    const out = new Uint32Array(4);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80, size: 'max' }), fc.nat(), fc.nat(), seedArb, (data, a, b, seed) => {
        const start = a % (data.length + 1);
        const end = start + (b % (data.length - start + 1));
        // Poison out so stale values cannot pass.
        out.fill(0xdeadbeef);
        murmur3_x64_128Into(data, start, end, seed, out);
        const [h1, h2] = murmur3_x64_128(data.slice(start, end), seed);
        expect(out[0]).toBe(Number(h1 & 0xffffffffn));
        expect(out[1]).toBe(Number(h1 >> 32n));
        expect(out[2]).toBe(Number(h2 & 0xffffffffn));
        expect(out[3]).toBe(Number(h2 >> 32n));
      }),
    );
  });

  it('returns unsigned 64-bit halves', () => {
    fc.assert(
      fc.property(bytesArb, seedArb, (data, seed) => {
        for (const h of murmur3_x64_128(data, seed)) {
          expect(h >= 0n && h < 1n << 64n).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('murmur2', () => {
  it("matches SMHasher's published verification value 0x27864C1E", () => {
    expect(smhasherVerification(4, (d, s) => le32(murmur2(d, s)))).toBe(0x27864c1e);
  });

  it('agrees with murmurhash (v2, which hashes Uint8Array bytes) on random bytes and seeds', () => {
    fc.assert(
      fc.property(bytesArb, seedArb, (data, seed) => {
        expect(murmur2(data, seed)).toBe(murmurhash.v2(data, seed));
      }),
      { numRuns: 2000 },
    );
  });

  it('hashes exactly the [start, end) sub-range', () => {
    fc.assert(
      fc.property(bytesArb, fc.nat(), fc.nat(), seedArb, (data, a, b, seed) => {
        const start = a % (data.length + 1);
        const end = start + (b % (data.length - start + 1));
        expect(murmur2Range(data, start, end, seed)).toBe(murmur2(data.slice(start, end), seed));
      }),
    );
  });
});

describe("murmur2Cassandra (Cassandra's MurmurHash.hash32 tail handling)", () => {
  it('equals the reference when the length is a multiple of 4', () => {
    fc.assert(
      fc.property(bytesArb, seedArb, (raw, seed) => {
        const data = raw.subarray(0, raw.length & ~3);
        expect(murmur2Cassandra(data, seed)).toBe(murmur2(data, seed));
      }),
    );
  });

  it('equals the reference on the tail bytes reversed when every tail byte is below 0x80', () => {
    fc.assert(
      fc.property(bytesArb, fc.uint8Array({ minLength: 1, maxLength: 3, max: 0x7f }), seedArb, (raw, tail, seed) => {
        const body = raw.subarray(0, raw.length & ~3);
        const data = new Uint8Array([...body, ...tail]);
        const reversed = new Uint8Array([...body, ...[...tail].reverse()]);
        expect(murmur2Cassandra(data, seed)).toBe(murmur2(reversed, seed));
      }),
    );
  });

  it('differs from the reference on a high tail byte (Java sign extension)', () => {
    // A one-byte tail has no order question, so any difference comes from the sign alone.
    let differ = 0;
    for (let b = 0x80; b <= 0xff; b++) {
      if (murmur2Cassandra(Uint8Array.of(b), 0) !== murmur2(Uint8Array.of(b), 0)) differ++;
    }
    expect(differ).toBe(128);
    for (let b = 0; b < 0x80; b++) expect(murmur2Cassandra(Uint8Array.of(b), 7)).toBe(murmur2(Uint8Array.of(b), 7));
  });
});

describe("LevelDB's Hash", () => {
  interface HashVector {
    seed: number;
    data_hex: string;
    hash: number;
  }

  it('reproduces every LevelDB-made vector in test/fixtures/hash-vectors.jsonl', () => {
    const vectors = readJsonLines<HashVector>('hash-vectors.jsonl');
    expect(vectors.length).toBeGreaterThan(0);
    for (const v of vectors) expect(levelDBHash(hex(v.data_hex), v.seed)).toBe(v.hash);
  });

  it("matches LevelDB's util/hash_test.cc (SignedUnsignedIssue)", () => {
    // prettier-ignore
    const data5 = Uint8Array.of(
      0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
      0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    );
    expect(data5.length).toBe(48);
    expect(levelDBHash(new Uint8Array(0), 0xbc9f1d34)).toBe(0xbc9f1d34);
    expect(levelDBHash(hex('62'), 0xbc9f1d34)).toBe(0xef1345c4);
    expect(levelDBHash(hex('c397'), 0xbc9f1d34)).toBe(0x5b663814);
    expect(levelDBHash(hex('e299a5'), 0xbc9f1d34)).toBe(0x323c078f);
    expect(levelDBHash(hex('e180b932'), 0xbc9f1d34)).toBe(0xed21633a);
    expect(levelDBHash(data5, 0x12345678)).toBe(0xf333dabb);
  });

  it('hashes exactly the [start, end) sub-range', () => {
    fc.assert(
      fc.property(bytesArb, fc.nat(), fc.nat(), seedArb, (data, a, b, seed) => {
        const start = a % (data.length + 1);
        const end = start + (b % (data.length - start + 1));
        expect(levelDBHashRange(data, start, end, seed)).toBe(levelDBHash(data.slice(start, end), seed));
      }),
    );
  });
});
