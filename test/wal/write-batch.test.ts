import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { ValueType } from '../../src/format/internal-key.js';
import { BatchEntries, checkBatch, forEachBatchEntry, WriteBatch } from '../../src/wal/write-batch.js';

type Op = { type: 'put'; key: Uint8Array; value: Uint8Array } | { type: 'del'; key: Uint8Array };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ type: fc.constant('put' as const), key: fc.uint8Array({ maxLength: 300 }), value: fc.uint8Array({ maxLength: 300 }) }),
  fc.record({ type: fc.constant('del' as const), key: fc.uint8Array({ maxLength: 300 }) }),
);

function build(ops: Op[], seq: number): WriteBatch {
  const b = new WriteBatch();
  for (const op of ops) op.type === 'put' ? b.put(op.key, op.value) : b.del(op.key);
  b.setSequence(seq);
  return b;
}

function decode(rep: Uint8Array): Op[] {
  const out: Op[] = [];
  forEachBatchEntry(rep, (type, key, value) =>
    out.push(type === ValueType.VALUE ? { type: 'put', key: key.slice(), value: value.slice() } : { type: 'del', key: key.slice() }),
  );
  return out;
}

describe('WriteBatch', () => {
  it('round-trips entries, count and sequence in LevelDB byte order', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (ops, seq) => {
        const batch = build(ops, seq);
        expect(batch.count).toBe(ops.length);
        expect(batch.sequence).toBe(seq);
        expect(decode(batch.contents())).toEqual(ops);
        const copy = WriteBatch.fromContents(batch.contents());
        expect(copy.sequence).toBe(seq);
        expect(decode(copy.contents())).toEqual(ops);
      }),
    );
  });

  it('encodes exactly as LevelDB: header, tag, varint lengths', () => {
    const b = new WriteBatch().put(new Uint8Array([0x61]), new Uint8Array([0x62, 0x63])).del(new Uint8Array([0x64]));
    b.setSequence(0x0102);
    expect([...b.contents()]).toEqual([0x02, 0x01, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 1, 0x61, 2, 0x62, 0x63, 0, 1, 0x64]);
  });

  it('append concatenates entries and adds counts', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 10 }), fc.array(opArb, { maxLength: 10 }), (a, b) => {
        const joined = build(a, 5).append(build(b, 9));
        expect(joined.sequence).toBe(5);
        expect(decode(joined.contents())).toEqual([...a, ...b]);
      }),
    );
  });

  it('rejects every truncation and bad count with CORRUPTION before visiting anything', () => {
    const batch = build(
      [
        { type: 'put', key: new Uint8Array(200).fill(1), value: new Uint8Array(3) },
        { type: 'del', key: new Uint8Array([9]) },
      ],
      7,
    );
    const rep = batch.contents();
    for (let cut = 0; cut < rep.length; cut++) {
      let visited = 0;
      let caught: unknown;
      try {
        forEachBatchEntry(rep.subarray(0, cut), () => visited++);
      } catch (err) {
        caught = err;
      }
      // A cut on an entry boundary still parses, but then the count does not match.
      expect(isSieveError(caught, 'CORRUPTION')).toBe(true);
      expect(visited).toBe(0);
    }
    const badCount = rep.slice();
    badCount[8] = 3;
    expect(() => checkBatch(badCount, 'x.log', 40)).toThrow(/3.*x\.log at offset 40|header says 3/);
    const badTag = rep.slice();
    badTag[12] = 7;
    expect(() => checkBatch(badTag)).toThrow(/tag 7/);
  });
});

describe('BatchEntries.decode', () => {
  it('accepts and refuses exactly what checkBatch does, with the same message, and finds every entry', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.uint8Array({ maxLength: 6 }), fc.uint8Array({ maxLength: 6 })), { maxLength: 12 }),
        fc.array(fc.tuple(fc.nat(), fc.nat(255)), { maxLength: 3 }),
        fc.nat(8),
        (ops, flips, cut) => {
          const batch = new WriteBatch();
          for (const [put, k, v] of ops) {
            if (put) batch.put(k, v);
            else batch.del(k);
          }
          const rep = batch.contents().slice(0, Math.max(0, batch.byteLength - (cut < 6 ? 0 : cut)));
          for (const [at, byte] of flips) if (rep.length > 0) rep[at % rep.length] = byte;
          const expected = (() => {
            try {
              return { count: checkBatch(rep) };
            } catch (err) {
              return { error: (err as Error).message };
            }
          })();
          const entries = new BatchEntries();
          let got: { count: number } | { error: string };
          try {
            got = { count: entries.decode(rep) };
          } catch (err) {
            got = { error: (err as Error).message };
          }
          expect(got).toEqual(expected);
          if ('count' in got) {
            const seen: [number, number, number][] = [];
            forEachBatchEntry(rep, (type, key, value) => seen.push([type, key.length, value.length]));
            const f = entries.fields;
            expect(Array.from({ length: entries.count }, (_, i) => [f[i * 5]!, f[i * 5 + 2]!, f[i * 5 + 4]!])).toEqual(seen);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
