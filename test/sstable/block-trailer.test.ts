import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { bytewiseComparator, compareWhole } from '../../src/format/comparator.js';
import { crc32c, maskCrc } from '../../src/format/crc32c.js';
import { Block } from '../../src/sstable/block.js';
import { BlockBuilder } from '../../src/sstable/block-builder.js';
import {
  BLOCK_TRAILER_SIZE,
  decodeBlockContents,
  verifyBlockTrailer,
  writeBlockTrailer,
} from '../../src/sstable/block-trailer.js';
import { compressBlock, CompressionType } from '../../src/sstable/compression.js';

type Entry = [Uint8Array, Uint8Array];

/** A stored block as the table builder writes it: contents (maybe compressed) ‖ trailer. */
function store(raw: Uint8Array, type: CompressionType): Uint8Array {
  const c = compressBlock(type, raw);
  const out = new Uint8Array(c.length + BLOCK_TRAILER_SIZE);
  out.set(c);
  expect(writeBlockTrailer(out, c.length, c, 0, c.length, type)).toBe(out.length);
  return out;
}

const entriesArb = fc
  .uniqueArray(fc.tuple(fc.uint8Array({ maxLength: 10, max: 4 }), fc.uint8Array({ maxLength: 30, max: 3 })), {
    maxLength: 60,
    selector: ([k]) => Buffer.from(k).toString('hex'),
  })
  .map((es) => es.sort((a, b) => compareWhole(a[0], b[0])) as Entry[]);

function readAll(contents: Uint8Array): Entry[] {
  const it = new Block(contents, 'f.ldb', 0).newIterator(bytewiseComparator);
  const out: Entry[] = [];
  for (it.seekToFirst(); it.valid(); it.next()) out.push([it.key().slice(), it.value().slice()]);
  return out;
}

describe('block trailer', () => {
  it('is the type byte then the masked crc32c of contents ‖ type', () => {
    const contents = new Uint8Array([1, 2, 3]);
    const stored = store(contents, CompressionType.NONE);
    expect(stored[3]).toBe(0);
    const crc = maskCrc(crc32c(new Uint8Array([1, 2, 3, 0])));
    expect(Buffer.from(stored).readUInt32LE(4)).toBe(crc);
    expect(verifyBlockTrailer(stored, 0, 3)).toBe(0);
  });

  it('detects every single-byte error in contents, type or checksum', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 200 }), fc.nat(), fc.integer({ min: 1, max: 255 }), (raw, pos, x) => {
        const stored = store(raw, CompressionType.NONE);
        stored[pos % stored.length] ^= x;
        try {
          verifyBlockTrailer(stored, 0, raw.length, 'f.ldb', 77);
          expect.unreachable();
        } catch (err) {
          expect(err).toMatchObject({ code: 'CORRUPTION', file: 'f.ldb', offset: 77 });
        }
      }),
    );
  });

  it('a short read is CORRUPTION', () => {
    const stored = store(new Uint8Array(10), CompressionType.NONE);
    expect(() => verifyBlockTrailer(stored.subarray(0, stored.length - 1), 0, 10)).toThrow(/CORRUPTION.*truncated/);
    expect(() => decodeBlockContents(stored.subarray(0, 12), 0, 10, 'f', 0, false)).toThrow(/CORRUPTION/);
  });
});

describe('stored blocks: build → compress → trailer → decode → read', () => {
  it('round-trips for every compression type, uncompressed blocks as views of the read buffer', () => {
    fc.assert(
      fc.property(entriesArb, fc.constantFrom(0, 1, 4) as fc.Arbitrary<CompressionType>, fc.nat(5), (entries, type, pad) => {
        const b = new BlockBuilder(4);
        for (const [k, v] of entries) b.add(k, v);
        const stored = store(b.finish(), type);
        const buf = new Uint8Array(pad + stored.length + 4);
        buf.set(stored, pad);
        const size = stored.length - BLOCK_TRAILER_SIZE;
        const contents = decodeBlockContents(buf, pad, size, 'f.ldb', 100);
        if (type === CompressionType.NONE) expect(contents.buffer).toBe(buf.buffer);
        expect(readAll(contents)).toEqual(entries);
      }),
      { numRuns: 150 },
    );
  });

  it('random flips, truncations and extensions: the right entries or CORRUPTION, never anything else', () => {
    fc.assert(
      fc.property(
        entriesArb,
        fc.constantFrom(0, 1, 4) as fc.Arbitrary<CompressionType>,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { maxLength: 3 }),
        fc.integer({ min: -6, max: 6 }),
        (entries, type, flips, resize) => {
          const b = new BlockBuilder(4);
          for (const [k, v] of entries) b.add(k, v);
          const stored = store(b.finish(), type);
          const size = stored.length - BLOCK_TRAILER_SIZE;
          let bad = stored.slice();
          for (const [pos, x] of flips) bad[pos % bad.length] ^= x;
          // A truncated or extended read: the handle's size no longer matches what is there.
          const badSize = size + resize;
          if (badSize < 0) return;
          if (resize > 0) {
            const ext = new Uint8Array(bad.length + resize);
            ext.set(bad);
            bad = ext;
          }
          try {
            expect(readAll(decodeBlockContents(bad, 0, badSize, 'f.ldb', 0))).toEqual(entries);
          } catch (err) {
            if (!isSieveError(err, 'CORRUPTION')) throw err;
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});
