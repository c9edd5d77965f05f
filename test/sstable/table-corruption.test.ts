/**
 * The corruption fuzz: real tables (built ones of each compression and filter scope, and a
 * LevelDB-made one) with bytes flipped, ranges zeroed, the file truncated or extended. Every
 * outcome of open + full forward iteration + a backward step + gets is either exactly the
 * pristine table's data or a SieveError CORRUPTION naming the file and an offset — never another
 * exception, a hang, or a wrong value. Entries an iteration yields before an error must be right.
 * No read asks for more bytes than the file has (so nothing is allocated beyond the file size).
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import { KeyProbes } from '../../src/filter/key-probes.js';
import type { FilterPolicy } from '../../src/filter/policy.js';
import { encodeInternalKey, MAX_SEQUENCE, ValueType } from '../../src/format/internal-key.js';
import type { FileSystem, RandomAccessFile } from '../../src/fs/file-system.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { BlockCache } from '../../src/sstable/block-cache.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { ResidentFiles } from '../../src/sstable/resident-files.js';
import { GetStatus, Table, TableGetResult } from '../../src/sstable/table.js';
import type { TableBuilderOptions } from '../../src/sstable/table-builder.js';
import { fixturePath } from '../support/fixtures.js';
import { buildTable, discoverFilterPolicies, type Entry, hex, makeEntry, newMemFs, sortEntries } from './table-support.js';

const policies = await discoverFilterPolicies();
const bloom = new BloomFilterPolicy(10);
const NUM_RUNS = 400;
const lastPolicy: FilterPolicy = policies[policies.length - 1]!.make(10);
const allPolicies = [bloom, lastPolicy];

interface Base {
  name: string;
  bytes: Uint8Array;
  entries: { key: string; value: string }[];
  probes: { userKey: Uint8Array; status: GetStatus; value: string }[];
}

function sampleEntries(): Entry[] {
  const enc = new TextEncoder();
  const entries: Entry[] = [];
  for (let i = 0; i < 300; i++) {
    const k = enc.encode(`key-${String((i * 37) % 1000).padStart(4, '0')}`);
    entries.push(makeEntry(k, 100 + i, i % 6 === 0 ? ValueType.DELETION : ValueType.VALUE, enc.encode(`value ${i} `.repeat(1 + (i % 4)))));
    if (i % 5 === 0) entries.push(makeEntry(k, 50, ValueType.VALUE, enc.encode(`older ${i}`)));
  }
  return sortEntries(entries);
}

/** Reads the pristine table once to record what every mutated copy must show (or refuse). */
function makeBase(name: string, bytes: Uint8Array): Base {
  const fs = newMemFs();
  const w = fs.createWritable('/db/t.ldb');
  w.append(bytes);
  w.close();
  const table = Table.open(fs, '/db/t.ldb', { filterPolicies: allPolicies });
  const entries: Base['entries'] = [];
  const it = table.newIterator();
  for (it.seekToFirst(); it.valid(); it.next()) entries.push({ key: hex(it.key()), value: hex(it.value()) });
  const probes: Base['probes'] = [];
  const keys: Uint8Array[] = entries.filter((_, i) => i % 7 === 0).map((e) => Buffer.from(e.key, 'hex').subarray(0, -8));
  for (let i = 0; i < 15; i++) keys.push(new TextEncoder().encode(`absent-${i}`));
  for (const userKey of keys) {
    const r = lookup(table, userKey);
    probes.push({ userKey: Uint8Array.from(userKey), ...r });
  }
  table.close();
  expect(entries.length).toBeGreaterThan(100);
  expect(probes.some((p) => p.status === GetStatus.FOUND)).toBe(true);
  return { name, bytes, entries, probes };
}

function lookup(table: Table, userKey: Uint8Array): { status: GetStatus; value: string } {
  const probes = new KeyProbes();
  const result = new TableGetResult();
  probes.reset(userKey);
  const status = table.get(encodeInternalKey(userKey, MAX_SEQUENCE, ValueType.VALUE), userKey, probes, result);
  return { status, value: hex(result.value) };
}

function built(name: string, options: TableBuilderOptions): Base {
  const fs = newMemFs();
  buildTable(fs, '/db/t.ldb', sampleEntries(), { blockSize: 512, ...options });
  return makeBase(name, fs.readFile('/db/t.ldb'));
}

const bases: Base[] = [
  built('lz4, per-block Bloom', { compression: CompressionType.LZ4, filterPolicy: bloom }),
  built(`snappy, full-table ${lastPolicy.name}`, { compression: CompressionType.SNAPPY, filterPolicy: lastPolicy, filterScope: 'table' }),
  built('uncompressed, no filter', { compression: CompressionType.NONE }),
  makeBase('LevelDB ldb-snappy-small/000027.ldb', new Uint8Array(readFileSync(fixturePath('ldb-snappy-small', '000027.ldb')))),
];

/** A FileSystem over one file whose reads must never ask past the file's size. */
function boundedFs(bytes: Uint8Array): FileSystem {
  const inner = new MemFileSystem();
  inner.mkdir('/db');
  const w = inner.createWritable('/db/t.ldb');
  w.append(bytes);
  w.close();
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop !== 'openReadable') return Reflect.get(target, prop, receiver) as unknown;
      return (path: string): RandomAccessFile => {
        const file = target.openReadable(path);
        return {
          size: file.size,
          readAt(buf, bufOffset, length, position) {
            if (length > bytes.length) throw new Error(`read of ${length} bytes from a ${bytes.length}-byte file`);
            return file.readAt(buf, bufOffset, length, position);
          },
          close: () => file.close(),
        };
      };
    },
  });
}

type Mutation =
  | { kind: 'flip'; flips: { pos: number; xor: number }[] }
  | { kind: 'zero'; pos: number; len: number }
  | { kind: 'truncate'; keep: number; claimOriginalSize: boolean }
  | { kind: 'extend'; junk: Uint8Array }
  | { kind: 'repeatTail'; len: number };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('flip' as const), flips: fc.array(fc.record({ pos: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }), { minLength: 1, maxLength: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('zero' as const), pos: fc.nat(), len: fc.integer({ min: 1, max: 600 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('truncate' as const), keep: fc.nat(), claimOriginalSize: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('extend' as const), junk: fc.uint8Array({ minLength: 1, maxLength: 80 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('repeatTail' as const), len: fc.integer({ min: 1, max: 120 }) }) },
);

function mutate(bytes: Uint8Array, m: Mutation): { bytes: Uint8Array; claimedSize?: number } {
  const n = bytes.length;
  switch (m.kind) {
    case 'flip': {
      const out = bytes.slice();
      for (const f of m.flips) out[f.pos % n] ^= f.xor;
      return { bytes: out };
    }
    case 'zero': {
      const out = bytes.slice();
      out.fill(0, m.pos % n, Math.min(n, (m.pos % n) + m.len));
      return { bytes: out };
    }
    case 'truncate':
      return { bytes: bytes.slice(0, m.keep % n), claimedSize: m.claimOriginalSize ? n : undefined };
    case 'extend': {
      const out = new Uint8Array(n + m.junk.length);
      out.set(bytes);
      out.set(m.junk, n);
      return { bytes: out };
    }
    case 'repeatTail': {
      const len = Math.min(m.len, n);
      const out = new Uint8Array(n + len);
      out.set(bytes);
      out.set(bytes.subarray(n - len), n);
      return { bytes: out };
    }
  }
}

/** Runs the whole read path; throws an assertion error on anything but right data or CORRUPTION. */
function readMutated(base: Base, bytes: Uint8Array, claimedSize: number | undefined, cache: BlockCache, resident?: ResidentFiles): 'ok' | 'corruption' {
  const fs = boundedFs(bytes);
  let table: Table | undefined;
  try {
    // With `resident` (and no block cache, which would answer the repeated reads first), the
    // table takes an image of its file after a few block reads: the lookups read their blocks
    // into it, the scan and the second round of lookups decode them there, in place.
    table = Table.open(fs, '/db/t.ldb', { filterPolicies: allPolicies, fileSize: claimedSize, ...(resident ? { residentFiles: resident } : { blockCache: cache }) });
    if (resident) for (const p of base.probes) expect(lookup(table, p.userKey)).toEqual({ status: p.status, value: p.value });
    const it = table.newIterator();
    let i = 0;
    for (it.seekToFirst(); it.valid(); it.next()) {
      const want = base.entries[i++];
      if (want === undefined || hex(it.key()) !== want.key || hex(it.value()) !== want.value) {
        expect.unreachable(`entry ${i - 1}: ${hex(it.key())} → ${hex(it.value())}, want ${JSON.stringify(want)}`);
      }
    }
    expect(i).toBe(base.entries.length);
    it.seekToLast();
    expect(hex(it.key())).toBe(base.entries[base.entries.length - 1]!.key);
    it.prev();
    expect(hex(it.key())).toBe(base.entries[base.entries.length - 2]!.key);
    it.close();
    for (const p of base.probes) expect(lookup(table, p.userKey)).toEqual({ status: p.status, value: p.value });
    return 'ok';
  } catch (err) {
    if (!isSieveError(err, 'CORRUPTION')) throw err;
    expect(err.file).toBe('/db/t.ldb');
    expect(err.offset).toBeTypeOf('number');
    return 'corruption';
  } finally {
    table?.close();
  }
}

describe('corrupted tables read right or fail with CORRUPTION', () => {
  for (const base of bases) {
    it(base.name, () => {
      const outcomes = { ok: 0, corruption: 0 };
      fc.assert(
        fc.property(mutationArb, fc.boolean(), (m, resident) => {
          const { bytes, claimedSize } = mutate(base.bytes, m);
          outcomes[readMutated(base, bytes, claimedSize, new BlockCache(1 << 20), resident ? new ResidentFiles(1 << 30) : undefined)]++;
        }),
        { numRuns: NUM_RUNS },
      );
      // Both outcomes occur (a repeated footer, or a flip in its padding, reads right).
      expect(outcomes.corruption).toBeGreaterThan(NUM_RUNS / 2);
      expect(outcomes.ok).toBeGreaterThan(0);
      expect(outcomes.ok + outcomes.corruption).toBe(NUM_RUNS);
    });
  }

  it('every single-byte flip of a small table: in a block → CORRUPTION; only footer padding reads right', () => {
    const fs = newMemFs();
    buildTable(fs, '/db/t.ldb', sampleEntries().slice(0, 40), { compression: CompressionType.SNAPPY, filterPolicy: bloom, blockSize: 256 });
    const base = makeBaseSmall(fs.readFile('/db/t.ldb'));
    const n = base.bytes.length;
    const okAt: number[] = [];
    for (let pos = 0; pos < n; pos++) {
      const out = base.bytes.slice();
      out[pos] ^= 0x5a;
      if (readMutated(base, out, undefined, new BlockCache(0)) === 'ok') okAt.push(pos);
      // The same answer when the table has an image of its file in memory (each block checked as it joins).
      expect(readMutated(base, out, undefined, new BlockCache(0), new ResidentFiles(1 << 30))).toBe(okAt.at(-1) === pos ? 'ok' : 'corruption');
    }
    // The footer is 48 bytes: handles, zero padding to 40 bytes, magic. Only padding is unchecked.
    for (const pos of okAt) expect(pos).toBeGreaterThanOrEqual(n - 48);
    for (const pos of okAt) expect(pos).toBeLessThan(n - 8);
  });
});

/** makeBase without its size expectations (for a small table). */
function makeBaseSmall(bytes: Uint8Array): Base {
  const fs = newMemFs();
  const w = fs.createWritable('/db/t.ldb');
  w.append(bytes);
  w.close();
  const table = Table.open(fs, '/db/t.ldb', { filterPolicies: allPolicies });
  const entries: Base['entries'] = [];
  const it = table.newIterator();
  for (it.seekToFirst(); it.valid(); it.next()) entries.push({ key: hex(it.key()), value: hex(it.value()) });
  const probes = entries.map((e) => {
    const userKey = new Uint8Array(Buffer.from(e.key, 'hex').subarray(0, -8));
    return { userKey, ...lookup(table, userKey) };
  });
  table.close();
  return { name: 'small', bytes, entries, probes };
}
