import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { BlockHandle, Footer, FOOTER_SIZE, MAX_BLOCK_HANDLE_LENGTH } from '../../src/sstable/footer.js';

const handleArb = fc.tuple(fc.maxSafeNat(), fc.maxSafeNat()).map(([o, s]) => new BlockHandle(o, s));

function expectCorruption(fn: () => unknown, offset?: number): void {
  try {
    fn();
    expect.unreachable();
  } catch (err) {
    expect(isSieveError(err, 'CORRUPTION'), String(err)).toBe(true);
    if (offset !== undefined) expect((err as { offset?: number }).offset).toBe(offset);
  }
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

describe('Footer', () => {
  it('is 48 bytes: handles, zero padding to 40, magic 0xdb4775248b80fb57 little-endian', () => {
    const f = new Footer(new BlockHandle(300, 20), new BlockHandle(325, 4000));
    const enc = f.encode();
    expect(enc.length).toBe(FOOTER_SIZE);
    expect([...enc.subarray(0, 7)]).toEqual([0xac, 0x02, 0x14, 0xc5, 0x02, 0xa0, 0x1f]);
    expect([...enc.subarray(7, 40)].every((b) => b === 0)).toBe(true);
    expect(Buffer.from(enc.subarray(40)).readBigUInt64LE()).toBe(0xdb4775248b80fb57n);
  });

  it('round-trips any handles, also at an offset inside a larger buffer', () => {
    fc.assert(
      fc.property(handleArb, handleArb, fc.nat(10), (m, i, pad) => {
        const buf = new Uint8Array(pad + FOOTER_SIZE).fill(0xee);
        expect(new Footer(m, i).encodeTo(buf, pad)).toBe(pad + FOOTER_SIZE);
        const d = Footer.decode(buf, pad);
        expect([d.metaindexHandle.offset, d.metaindexHandle.size, d.indexHandle.offset, d.indexHandle.size]).toEqual([
          m.offset,
          m.size,
          i.offset,
          i.size,
        ]);
      }),
    );
  });

  it('bad magic, short input or undecodable handles are CORRUPTION', () => {
    const good = new Footer(new BlockHandle(1, 2), new BlockHandle(3, 4)).encode();
    for (let i = 40; i < 48; i++) {
      const bad = good.slice();
      bad[i] ^= 0x40;
      expectCorruption(() => Footer.decode(bad, 0, 'f.ldb', 5000), 5040);
    }
    expectCorruption(() => Footer.decode(good.subarray(1)));
    const overlong = good.slice();
    overlong.fill(0xff, 0, 40); // varints that never end before the magic
    expectCorruption(() => Footer.decode(overlong));
  });
});
