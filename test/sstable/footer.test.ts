import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { CompressionType } from '../../src/sstable/compression.js';
import {
  BlockHandle,
  Footer,
  footerFormatFor,
  footerFormatOfMagic,
  LEVELDB_FOOTER_SIZE,
  MAX_BLOCK_HANDLE_LENGTH,
  ROCKSDB_FOOTER_SIZE,
} from '../../src/sstable/footer.js';

const handleArb = fc.tuple(fc.maxSafeNat(), fc.maxSafeNat()).map(([o, s]) => new BlockHandle(o, s));

function expectCode(code: 'CORRUPTION' | 'NOT_SUPPORTED', fn: () => unknown, offset?: number, message?: RegExp): void {
  try {
    fn();
    expect.unreachable();
  } catch (err) {
    expect(isSieveError(err, code), String(err)).toBe(true);
    if (offset !== undefined) expect((err as { offset?: number }).offset).toBe(offset);
    if (message !== undefined) expect(String(err)).toMatch(message);
  }
}

function expectCorruption(fn: () => unknown, offset?: number, message?: RegExp): void {
  expectCode('CORRUPTION', fn, offset, message);
}

describe('BlockHandle', () => {
  it('round-trips, at most 20 bytes, and decodes into a reused handle', () => {
    const reused = new BlockHandle();
    fc.assert(
      fc.property(handleArb, fc.nat(5), (h, pad) => {
        const enc = h.encode();
        expect(enc.length).toBeLessThanOrEqual(MAX_BLOCK_HANDLE_LENGTH);
        const buf = new Uint8Array(pad + enc.length + 3);
        buf.set(enc, pad);
        expect(reused.decodeFrom(buf, pad, buf.length)).toBe(pad + enc.length);
        expect([reused.offset, reused.size]).toEqual([h.offset, h.size]);
      }),
    );
    expect(new BlockHandle(2 ** 53 - 1, 2 ** 53 - 1).encode().length).toBe(16);
  });

  it('a truncated handle is CORRUPTION naming the file offset', () => {
    const enc = new BlockHandle(1 << 20, 4000).encode();
    expectCorruption(() => BlockHandle.decode(enc, 0, enc.length - 1, 'x.ldb', 1000), 1000 + 3);
  });
});

const fields = (f: Footer): number[] => [f.metaindexHandle.offset, f.metaindexHandle.size, f.indexHandle.offset, f.indexHandle.size];

describe('Footer: LevelDB format', () => {
  it('is 48 bytes: handles, zero padding to 40, magic 0xdb4775248b80fb57 little-endian', () => {
    const f = new Footer(new BlockHandle(300, 20), new BlockHandle(325, 4000));
    expect(f.format).toBe('leveldb');
    expect(f.formatVersion).toBe(0);
    const enc = f.encode();
    expect(enc.length).toBe(LEVELDB_FOOTER_SIZE);
    expect(f.encodedLength).toBe(48);
    expect([...enc.subarray(0, 7)]).toEqual([0xac, 0x02, 0x14, 0xc5, 0x02, 0xa0, 0x1f]);
    expect([...enc.subarray(7, 40)].every((b) => b === 0)).toBe(true);
    expect(Buffer.from(enc.subarray(40)).readBigUInt64LE()).toBe(0xdb4775248b80fb57n);
  });

  it('round-trips any handles, also at the end of a larger buffer (a table tail)', () => {
    fc.assert(
      fc.property(handleArb, handleArb, fc.nat(10), (m, i, pad) => {
        const buf = new Uint8Array(pad + LEVELDB_FOOTER_SIZE).fill(0xee);
        expect(new Footer(m, i).encodeTo(buf, pad)).toBe(pad + LEVELDB_FOOTER_SIZE);
        const d = Footer.decode(buf);
        expect(d.format).toBe('leveldb');
        expect(fields(d)).toEqual(fields(new Footer(m, i)));
      }),
    );
  });

  it('bad magic, short input or undecodable handles are CORRUPTION naming the file offset', () => {
    const good = new Footer(new BlockHandle(1, 2), new BlockHandle(3, 4)).encode();
    for (let i = 40; i < 48; i++) {
      const bad = good.slice();
      bad[i] ^= 0x40;
      expectCorruption(() => Footer.decode(bad, 'f.ldb', 5000), 5040, /bad magic/);
    }
    expectCorruption(() => Footer.decode(good.subarray(1)), 0, /too short/);
    const overlong = good.slice();
    overlong.fill(0xff, 0, 40); // varints that never end before the magic
    expectCorruption(() => Footer.decode(overlong, 'f.ldb', 100));
  });
});

describe('Footer: RocksDB block-based format_version 2', () => {
  const rocks = (m: BlockHandle, i: BlockHandle): Footer => new Footer(m, i, 'rocksdb');

  it('is 53 bytes: checksum type 1 (crc32c), handles, zero padding to 41, fixed32 2, magic 0x88e241b785f4cff7', () => {
    const f = rocks(new BlockHandle(300, 20), new BlockHandle(325, 4000));
    expect(f.formatVersion).toBe(2);
    const enc = f.encode();
    expect(enc.length).toBe(ROCKSDB_FOOTER_SIZE);
    expect(f.encodedLength).toBe(53);
    expect(enc[0]).toBe(1);
    expect([...enc.subarray(1, 8)]).toEqual([0xac, 0x02, 0x14, 0xc5, 0x02, 0xa0, 0x1f]);
    expect([...enc.subarray(8, 41)].every((b) => b === 0)).toBe(true);
    expect(Buffer.from(enc).readUInt32LE(41)).toBe(2);
    expect(Buffer.from(enc.subarray(45)).readBigUInt64LE()).toBe(0x88e241b785f4cff7n);
  });

  it('round-trips any handles; a LevelDB footer and a RocksDB one are told apart by the magic alone', () => {
    fc.assert(
      fc.property(handleArb, handleArb, fc.nat(10), fc.boolean(), (m, i, pad, isRocks) => {
        const f = new Footer(m, i, isRocks ? 'rocksdb' : 'leveldb');
        const buf = new Uint8Array(pad + ROCKSDB_FOOTER_SIZE).fill(0xee);
        // Written at the end of the buffer, after whatever bytes the table has before it.
        f.encodeTo(buf, buf.length - f.encodedLength);
        const d = Footer.decode(buf, 'x.ldb', 1000);
        expect(d.format).toBe(f.format);
        expect(fields(d)).toEqual(fields(f));
        expect(footerFormatOfMagic(buf)).toBe(f.format);
      }),
    );
  });

  it('another format_version or checksum type is CORRUPTION that names it (unchecksummed bytes: damage or another writer)', () => {
    const good = rocks(new BlockHandle(1, 2), new BlockHandle(3, 4)).encode();
    for (const v of [0, 1, 3, 4, 5, 6, 7, 0x01000002]) {
      const b = good.slice();
      Buffer.from(b.buffer).writeUInt32LE(v, 41);
      expectCorruption(() => Footer.decode(b, 'r.sst', 1000), 1041, new RegExp(`format_version ${v}: damaged, or a RocksDB table`));
    }
    for (const [type, name] of [[0, '0 \\(none\\)'], [2, '2 \\(xxHash\\)'], [3, '3 \\(xxHash64\\)'], [4, '4 \\(XXH3\\)'], [0x80, '128:']] as const) {
      const b = good.slice();
      b[0] = type;
      expectCorruption(() => Footer.decode(b, 'r.sst', 1000), 1000, new RegExp(`checksum type ${name}`));
    }
  });

  it('a RocksDB magic with fewer than 53 bytes, or undecodable handles, is CORRUPTION', () => {
    const good = rocks(new BlockHandle(1, 2), new BlockHandle(3, 4)).encode();
    expectCorruption(() => Footer.decode(good.subarray(3), 'r.sst', 7), 7, /cut short/);
    const overlong = good.slice();
    overlong.fill(0xff, 1, 41);
    expectCorruption(() => Footer.decode(overlong, 'r.sst', 0));
  });

  it("RocksDB's plain and cuckoo tables are NOT_SUPPORTED, not 'not an sstable'", () => {
    for (const magic of [0x8242229663bf9564n, 0x4f3418eb7a8f13b8n, 0x926789d0c5f17873n]) {
      const b = Buffer.alloc(ROCKSDB_FOOTER_SIZE);
      b.writeBigUInt64LE(magic, ROCKSDB_FOOTER_SIZE - 8);
      expectCode('NOT_SUPPORTED', () => Footer.decode(b, 'p.sst', 0), ROCKSDB_FOOTER_SIZE - 8, /plain|cuckoo/);
      expect(footerFormatOfMagic(b)).toBeUndefined();
    }
  });

  it('LZ4 tables are written with the RocksDB footer, snappy and none with LevelDB\'s', () => {
    expect(footerFormatFor(CompressionType.LZ4)).toBe('rocksdb');
    expect(footerFormatFor(CompressionType.SNAPPY)).toBe('leveldb');
    expect(footerFormatFor(CompressionType.NONE)).toBe('leveldb');
  });
});
