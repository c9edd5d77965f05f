/**
 * Round trip: any sorted set of internal keys (deletions, several versions of a key, empty and
 * binary keys), any block size and restart interval, every compression, every filter policy in
 * src/filter at several bits/key and both filter scopes → TableBuilder into a MemFileSystem →
 * Table.open → forward and backward iteration, seeks to and between keys, `get` of every user
 * key at several sequence numbers and of absent keys, against a sorted-array model.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyProbes } from '../../src/filter/key-probes.js';
import { encodeInternalKey, MAX_SEQUENCE, ValueType } from '../../src/format/internal-key.js';
import { BlockCache } from '../../src/sstable/block-cache.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { GetStatus, Table, TableGetResult } from '../../src/sstable/table.js';
import {
  buildTable,
  discoverFilterPolicies,
  type Entry,
  hex,
  lowerBound,
  makeEntry,
  modelGet,
  newMemFs,
  sortEntries,
  userCompare,
} from './table-support.js';

const policies = await discoverFilterPolicies();

/** Keys over a small alphabet, so that they share prefixes and collide across versions. */
const userKeyArb = fc
  .array(fc.constantFrom(0x00, 0x01, 0x61, 0x62, 0x63, 0xfe, 0xff), { maxLength: 12 })
  .map((a) => new Uint8Array(a));

const valueArb = fc.oneof(
  fc.uint8Array({ maxLength: 40 }),
  // Compressible values, so compressed blocks occur beside raw ones.
  fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 80 })).map(([unit, n]) => {
    const out = new Uint8Array(unit.length * n);
    for (let i = 0; i < n; i++) out.set(unit, i * unit.length);
    return out;
  }),
);

/** One user key with 1..3 versions (distinct sequences), each a value or a deletion. */
const versionsArb = fc.record({
  userKey: userKeyArb,
  versions: fc.uniqueArray(
    fc.record({ seq: fc.integer({ min: 1, max: 1_000_000 }), deletion: fc.boolean(), value: valueArb }),
    { minLength: 1, maxLength: 3, selector: (v) => v.seq },
  ),
});

const entriesArb = fc
  .uniqueArray(versionsArb, { maxLength: 150, size: 'medium', selector: (k) => hex(k.userKey) })
  .map((keys) =>
    sortEntries(
      keys.flatMap((k) =>
        k.versions.map((v) =>
          makeEntry(k.userKey, v.seq, v.deletion ? ValueType.DELETION : ValueType.VALUE, v.deletion ? new Uint8Array(0) : v.value),
        ),
      ),
    ),
  );

const optionsArb = fc.record({
  blockSize: fc.constantFrom(16, 64, 256, 1024, 4096),
  blockRestartInterval: fc.integer({ min: 1, max: 16 }),
  compression: fc.constantFrom(CompressionType.NONE, CompressionType.SNAPPY, CompressionType.LZ4),
  policy: fc.integer({ min: -1, max: policies.length - 1 }),
  bitsPerKey: fc.constantFrom(1, 4, 10),
  filterScope: fc.constantFrom('block' as const, 'table' as const),
  cacheCapacity: fc.constantFrom(-1, 0, 2048, 1 << 20),
});

/** Checks the iterator is at `e` (or invalid for undefined); cheap unless it fails. */
function expectAt(it: { valid(): boolean; key(): Uint8Array; value(): Uint8Array }, e: Entry | undefined): void {
  if (e === undefined) {
    if (it.valid()) expect(hex(it.key())).toBe('(invalid)');
    return;
  }
  if (!it.valid() || !sameBytes(it.key(), e.key) || !sameBytes(it.value(), e.value)) {
    expect(it.valid()).toBe(true);
    expect(hex(it.key())).toBe(hex(e.key));
    expect(hex(it.value())).toBe(hex(e.value));
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.compare(a, b) === 0;
}

function fail(message: string): never {
  expect.unreachable(message);
  throw new Error(message);
}

function checkTable(entries: Entry[], absent: Uint8Array[], o: typeof optionsArb extends fc.Arbitrary<infer T> ? T : never): void {
  const fs = newMemFs();
  const policy = o.policy >= 0 ? policies[o.policy]!.make(o.bitsPerKey) : undefined;
  const props = buildTable(fs, '/db/000001.ldb', entries, {
    blockSize: o.blockSize,
    blockRestartInterval: o.blockRestartInterval,
    compression: o.compression,
    filterPolicy: policy,
    filterScope: o.filterScope,
  });
  const blockCache = o.cacheCapacity >= 0 ? new BlockCache(o.cacheCapacity) : undefined;
  const table = Table.open(fs, '/db/000001.ldb', {
    filterPolicies: policy !== undefined ? [policy] : [],
    blockCache,
  });

  expect(props.numEntries).toBe(entries.length);
  expect(table.properties).toMatchObject({
    numEntries: entries.length,
    numDeletions: entries.filter((e) => e.type === ValueType.DELETION).length,
    filterPolicy: policy?.name ?? '',
  });
  expect(table.filterPolicy).toBe(policy);
  expect(table.filterScope).toBe(policy === undefined ? undefined : o.filterScope);

  // Forward and backward.
  const it = table.newIterator();
  const forward: Entry[] = [];
  let i = 0;
  for (it.seekToFirst(); it.valid(); it.next()) {
    expectAt(it, entries[i++]);
    forward.push(entries[i - 1]!);
  }
  expect(i).toBe(entries.length);
  i = entries.length;
  for (it.seekToLast(); it.valid(); it.prev()) expectAt(it, entries[--i]);
  expect(i).toBe(0);

  // Seeks to every key, between versions (seq − 1, seq + 1), to absent keys; then a step each way.
  const targets: Uint8Array[] = [];
  for (const e of entries) {
    targets.push(e.key, encodeInternalKey(e.userKey, e.seq + 1, ValueType.VALUE));
    targets.push(encodeInternalKey(e.userKey, e.seq - 1, ValueType.VALUE));
  }
  for (const k of absent) targets.push(encodeInternalKey(k, MAX_SEQUENCE, ValueType.VALUE));
  for (const t of targets) {
    const at = lowerBound(entries, t);
    it.seek(t);
    expectAt(it, entries[at]);
    if (it.valid()) {
      it.prev();
      expectAt(it, entries[at - 1]);
      if (at > 0) {
        it.next();
        it.next();
        expectAt(it, entries[at + 1]);
      }
    }
  }
  it.close();

  // get: every user key at several sequences, and absent keys (never a false negative).
  const probes = new KeyProbes();
  const result = new TableGetResult();
  const seqs = (e: Entry): number[] => [MAX_SEQUENCE, e.seq, e.seq - 1, e.seq + 1, 0];
  for (const e of entries) {
    probes.reset(e.userKey);
    for (const seq of seqs(e)) {
      const status = table.get(encodeInternalKey(e.userKey, seq, ValueType.VALUE), e.userKey, probes, result);
      const want = modelGet(entries, e.userKey, seq);
      const what = `get(${hex(e.userKey)} @${seq})`;
      if (want === undefined) {
        if (status !== GetStatus.NOT_FOUND) fail(`${what}: ${status}, want NOT_FOUND`);
      } else if (want.type === ValueType.DELETION) {
        if (status !== GetStatus.DELETED || result.sequence !== want.seq) fail(`${what}: ${status}, want DELETED`);
      } else if (status !== GetStatus.FOUND || result.sequence !== want.seq || !sameBytes(result.value, want.value)) {
        fail(`${what}: ${status} ${hex(result.value)}, want FOUND ${hex(want.value)}`);
      }
    }
  }
  for (const k of absent) {
    probes.reset(k);
    const status = table.get(encodeInternalKey(k, MAX_SEQUENCE, ValueType.VALUE), k, probes, result);
    if (status !== GetStatus.NOT_FOUND) fail(`get(absent ${hex(k)}): ${status}`);
  }

  // approximateOffsetOf grows with the key and stays inside the file.
  let last = 0;
  for (const e of entries) {
    const off = table.approximateOffsetOf(e.key);
    if (off < last) fail(`approximateOffsetOf went back at ${hex(e.key)}`);
    last = off;
  }
  expect(last).toBeLessThanOrEqual(table.fileSize);
  if (blockCache !== undefined) expect(blockCache.usage).toBeLessThanOrEqual(blockCache.capacity);
  table.close();
}

describe('TableBuilder → Table round trip', () => {
  it('finds the filter policies of src/filter', () => {
    console.log(`filter policies under test: ${policies.map((p) => p.label).join(', ')}`);
    expect(policies.map((p) => p.label)).toContain('BloomFilterPolicy');
  });

  it('any entries, block size, compression, filter policy and scope', () => {
    fc.assert(
      fc.property(
        entriesArb,
        fc.array(userKeyArb, { maxLength: 20 }),
        optionsArb,
        (entries, candidates, options) => {
          const present = new Set(entries.map((e) => hex(e.userKey)));
          const absent = candidates.filter((k) => !present.has(hex(k)));
          checkTable(entries, absent, options);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('each policy at each scope and compression, on a larger table', () => {
    const entries: Entry[] = [];
    for (let i = 0; i < 3000; i++) {
      const k = new TextEncoder().encode(`user-${(i * 7919) % 10007}`);
      entries.push(makeEntry(k, 10 + i, i % 5 === 0 ? ValueType.DELETION : ValueType.VALUE, new TextEncoder().encode(`v${i}`.repeat(i % 9))));
      if (i % 3 === 0) entries.push(makeEntry(k, 5, ValueType.VALUE, new TextEncoder().encode(`old${i}`)));
    }
    sortEntries(entries);
    for (let i = 1; i < entries.length; i++) expect(userCompare(entries[i - 1]!.userKey, entries[i]!.userKey)).toBeLessThanOrEqual(0);
    const absent = Array.from({ length: 200 }, (_, i) => new TextEncoder().encode(`absent-${i}`));
    for (let p = -1; p < policies.length; p++) {
      for (const filterScope of ['block', 'table'] as const) {
        for (const compression of [CompressionType.NONE, CompressionType.SNAPPY, CompressionType.LZ4]) {
          checkTable(entries, absent, {
            blockSize: 1024,
            blockRestartInterval: 16,
            compression,
            policy: p,
            bitsPerKey: 10,
            filterScope,
            cacheCapacity: 16384,
          });
        }
      }
    }
  });
});
