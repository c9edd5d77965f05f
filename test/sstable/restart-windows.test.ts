/**
 * Restart windows (src/sstable/restart-windows.ts): windows that differ order user keys as the
 * keys sort, and a block searched through its windows lands where the plain search (the model
 * here) does, for blocks of internal keys with shared prefixes, short separators at either end
 * and targets with and without the prefix.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareWhole } from '../../src/format/comparator.js';
import { bytewiseInternalComparator } from '../../src/format/internal-key-comparator.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { Block } from '../../src/sstable/block.js';
import { BlockBuilder } from '../../src/sstable/block-builder.js';
import { WINDOWS_AFTER_SEEKS, WINDOWS_MIN_RESTARTS, windowOf } from '../../src/sstable/restart-windows.js';

const cmp = bytewiseInternalComparator;
const compareKeys = (a: Uint8Array, b: Uint8Array): number => cmp.compare(a, 0, a.length, b, 0, b.length);

/**
 * Tails over a small alphabet ('0'-'2' and 0xff), so windows and low windows tie, keys end inside
 * them or run past both, and a window can be all ones, as an outsider's after the prefix is.
 */
const tailArb = fc.uint8Array({ maxLength: 11, max: 3 }).map((tail) => tail.map((b) => (b === 3 ? 0xff : b + 0x30)));
/** A block's common stem: keys with it have long shared prefixes. */
const stemArb = fc.constantFrom('', 'k', 'key0', 'key00').map((s) => Buffer.from(s));
/** A separator before or after the stem's range (an index block's short successor "l"). */
const outsiderArb = fc.constantFrom(Uint8Array.of(0x6c), Uint8Array.of(0x21), Uint8Array.of(), Uint8Array.of(0x6b, 0x66));

describe('restart windows', () => {
  it('windows, then low windows, that differ order two user keys with the same prefix as the keys sort', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4, max: 2 }), fc.uint8Array({ maxLength: 11, max: 2 }), fc.uint8Array({ maxLength: 11, max: 2 }), (prefix, a, b) => {
        const ka = Uint8Array.from([...prefix, ...a]);
        const kb = Uint8Array.from([...prefix, ...b]);
        const wa = windowOf(ka, 0, ka.length, prefix.length);
        const wb = windowOf(kb, 0, kb.length, prefix.length);
        const la = windowOf(ka, 0, ka.length, prefix.length + 4);
        const lb = windowOf(kb, 0, kb.length, prefix.length + 4);
        if (wa !== wb) expect(Math.sign(compareWhole(ka, kb))).toBe(Math.sign(wa - wb));
        else if (la !== lb) expect(Math.sign(compareWhole(ka, kb))).toBe(Math.sign(la - lb));
      }),
      { numRuns: 500 },
    );
  });

  it('a block searched through its windows lands where the plain search does', () => {
    const blockArb = stemArb.chain((stem) => {
      const userKeyArb = tailArb.map((tail) => Uint8Array.from([...stem, ...tail]));
      const keysArb = fc
        .tuple(
          fc.uniqueArray(fc.tuple(userKeyArb, fc.integer({ min: 0, max: 9 })), {
            minLength: WINDOWS_MIN_RESTARTS,
            maxLength: 120,
            selector: ([u, s]) => `${Buffer.from(u).toString('hex')}/${s}`,
          }),
          fc.option(outsiderArb),
          fc.option(outsiderArb),
        )
        .map(([keys, low, high]) => {
          const all = keys.map(([u, s]) => encodeInternalKey(u, s, ValueType.VALUE));
          if (low !== null) all.push(encodeInternalKey(low, 1, ValueType.VALUE));
          if (high !== null) all.push(encodeInternalKey(high, 1, ValueType.VALUE));
          const unique = [...new Map(all.map((k) => [Buffer.from(k).toString('hex'), k])).values()];
          return unique.sort(compareKeys);
        });
      const targetArb = fc.tuple(fc.oneof(userKeyArb, outsiderArb), fc.integer({ min: 0, max: 10 }));
      return fc.tuple(keysArb, fc.array(targetArb, { minLength: 1, maxLength: 40 }));
    });
    // Interval 1 is an index block's (every region one entry: the search's answer is the next
    // restart point's entry); 2 and 3 leave regions to scan, and may end with a one-entry region.
    fc.assert(
      fc.property(blockArb, fc.constantFrom(1, 1, 2, 3), ([keys, targets], interval) => {
        if (Math.ceil(keys.length / interval) < WINDOWS_MIN_RESTARTS) return;
        const builder = new BlockBuilder(interval);
        keys.forEach((k, i) => builder.add(k, Uint8Array.of(i & 0xff)));
        const block = new Block(builder.finish().slice());
        const it = block.newIterator(cmp);
        // Enough seeks that the windows are built before most of the checked ones.
        const probes = [...Array.from({ length: WINDOWS_AFTER_SEEKS }, () => targets[0]!), ...targets];
        for (const [user, sequence] of probes) {
          const target = encodeInternalKey(user, sequence, ValueType.VALUE);
          it.seek(target);
          const expected = keys.findIndex((k) => compareKeys(k, target) >= 0);
          if (expected < 0) expect(it.valid()).toBe(false);
          else expect(Buffer.from(it.key()).equals(Buffer.from(keys[expected]!))).toBe(true);
        }
        expect(block.windows).not.toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it('a target whose window is all ones sorts below a key after the prefix, whatever its low window', () => {
    // Keys "k0" … "k9" and "k:" … (the prefix "k"), then "l", which lacks it and sorts after them.
    const users = Array.from({ length: WINDOWS_MIN_RESTARTS + 2 }, (_, i) => Uint8Array.of(0x6b, 0x30 + i));
    users.push(Uint8Array.of(0x6c));
    const builder = new BlockBuilder(1);
    users.forEach((u, i) => builder.add(encodeInternalKey(u, 1, ValueType.VALUE), Uint8Array.of(i)));
    const block = new Block(builder.finish().slice());
    const it = block.newIterator(cmp);
    const target = encodeInternalKey(Uint8Array.of(0x6b, 0xff, 0xff, 0xff, 0xff, 0x31), 1, ValueType.VALUE);
    for (let i = 0; i <= WINDOWS_AFTER_SEEKS; i++) {
      it.seek(target);
      expect(Buffer.from(it.key()).equals(Buffer.from(encodeInternalKey(Uint8Array.of(0x6c), 1, ValueType.VALUE)))).toBe(true);
    }
    expect(block.windows).not.toBeNull();
  });

  it('a block whose restart entries do not decode as internal keys gets no windows', () => {
    const builder = new BlockBuilder(1);
    for (let i = 0; i < WINDOWS_MIN_RESTARTS; i++) builder.add(Uint8Array.of(0x41 + i), Uint8Array.of(i)); // 1-byte keys: no trailer
    const block = new Block(builder.finish().slice());
    const it = block.newIterator(cmp);
    for (let i = 0; i <= WINDOWS_AFTER_SEEKS; i++) it.seek(Uint8Array.of(0x41, 0, 0, 0, 0, 0, 0, 0, 0));
    expect(block.seekCount).toBe(WINDOWS_AFTER_SEEKS);
    expect(block.windows).toBeNull();
  });
});
