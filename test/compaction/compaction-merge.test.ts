import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { encodeInternalKey, readSequence, readValueType, ValueType } from '../../src/format/internal-key.js';
import { compareBytes } from '../../src/format/bytes.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { TableBuilder } from '../../src/sstable/table-builder.js';
import { TableCache } from '../../src/sstable/table-cache.js';
import { tableFileName } from '../../src/version/filenames.js';
import { compareInternal } from '../../src/version/version.js';
import type { FileMetaData } from '../../src/version/version-edit.js';
import { outputBound, runCompaction, type CompactionTask } from '../../src/compaction/compaction.js';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';

interface Entry {
  key: Uint8Array; // user key
  seq: number;
  type: ValueType;
  value: Uint8Array;
}

const DIR = '/db';

function writeTable(fs: MemFileSystem, number: number, entries: Entry[]): FileMetaData {
  const sorted = [...entries].sort((a, b) => compareBytes(a.key, b.key) || b.seq - a.seq);
  const file = fs.createWritable(tableFileName(DIR, number));
  const b = new TableBuilder(file, { blockSize: 256, compression: CompressionType.NONE });
  for (const e of sorted) b.add(encodeInternalKey(e.key, e.seq, e.type), e.value);
  b.finish();
  file.close();
  return { number, fileSize: b.fileSize, smallest: b.smallestKey!.slice(), largest: b.largestKey!.slice() };
}

function readTable(fs: MemFileSystem, meta: FileMetaData): Entry[] {
  const cache = new TableCache(fs, DIR);
  const it = cache.newIterator(meta.number, meta.fileSize);
  const out: Entry[] = [];
  for (it.seekToFirst(); it.valid(); it.next()) {
    const k = it.key();
    out.push({ key: k.slice(0, k.length - 8), seq: readSequence(k, k.length), type: readValueType(k, k.length) as ValueType, value: it.value().slice() });
  }
  it.close();
  cache.close();
  return out;
}

/** What a reader at `seq` sees of `key` in `entries` (plus what deeper levels hold). */
function visible(entries: Entry[], deeper: Map<string, string>, key: string, seq: number): string | undefined {
  let best: Entry | undefined;
  for (const e of entries) {
    if (Buffer.from(e.key).toString('hex') !== key || e.seq > seq) continue;
    if (best === undefined || e.seq > best.seq) best = e;
  }
  if (best === undefined) return deeper.get(key);
  return best.type === ValueType.VALUE ? Buffer.from(best.value).toString('hex') : undefined;
}

const historyArb = fc
  .record({
    ops: fc.array(fc.tuple(fc.integer({ min: 0, max: 12 }), fc.boolean(), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 3 })), {
      minLength: 1,
      maxLength: 120,
    }),
    snapshotPicks: fc.array(fc.nat(), { maxLength: 4 }),
    deeperKeys: fc.uniqueArray(fc.integer({ min: 0, max: 12 }), { maxLength: 4 }),
    maxFileSize: fc.constantFrom(300, 1000, 1 << 20),
  })
  .map(({ ops, snapshotPicks, deeperKeys, maxFileSize }) => {
    // ops: (key id, isPut, value length, destination: 0..2 = one of three L0 tables, 3 = L1)
    const entries = ops.map(([k, put, len, dest], i) => ({
      entry: { key: Buffer.from(`key-${String(k).padStart(2, '0')}`), seq: i + 1, type: put ? ValueType.VALUE : ValueType.DELETION, value: Buffer.alloc(put ? len : 0, i & 0xff) } as Entry,
      dest,
    }));
    const snapshots = [...new Set(snapshotPicks.map((p) => (p % ops.length) + 1))].sort((a, b) => a - b);
    return { entries, snapshots, deeperKeys, maxFileSize };
  });

describe('runCompaction', () => {
  it('keeps exactly what every snapshot and the newest reader can see; outputs sorted, disjoint, keys unsplit', () => {
    fc.assert(
      fc.property(historyArb, ({ entries, snapshots, deeperKeys, maxFileSize }) => {
        const fs = new MemFileSystem();
        fs.mkdir(DIR);
        // L1 entries must be older than every L0 entry of the same key: give L1 the oldest history.
        const l1 = entries.filter((e) => e.dest === 3).map((e) => e.entry);
        const l0Groups = [0, 1, 2].map((d) => entries.filter((e) => e.dest === d).map((e) => e.entry));
        // Re-sequence so that L1 < L0 table 0 < L0 table 1 < L0 table 2 (newer tables, newer data).
        let seq = 1;
        for (const e of l1) e.seq = seq++;
        for (const g of l0Groups) for (const e of g) e.seq = seq++;
        const maxSeq = seq - 1;
        const snaps = snapshots.filter((s) => s <= maxSeq);
        let number = 10;
        const upper = l0Groups.filter((g) => g.length > 0).map((g) => writeTable(fs, number++, g)).reverse();
        const lower = l1.length > 0 ? [writeTable(fs, number++, l1)] : [];
        // A deeper level (L2) holding old values for some keys: deletions of those must stay.
        const deeperMap = new Map<string, string>();
        const deeperEntries = deeperKeys.map((k) => ({ key: Buffer.from(`key-${String(k).padStart(2, '0')}`), seq: 0, type: ValueType.VALUE, value: Buffer.from('deep') }));
        for (const e of deeperEntries) deeperMap.set(Buffer.from(e.key).toString('hex'), Buffer.from('deep').toString('hex'));
        const deeperFiles = deeperEntries.length > 0 ? [writeTable(fs, 99, deeperEntries)] : [];
        const inputBytes = [...upper, ...lower].reduce((s, f) => s + f.fileSize, 0);
        const reserved = Array.from({ length: outputBound(inputBytes, maxFileSize, 0) + 64 }, (_, i) => 1000 + i);
        const task: CompactionTask = {
          dir: DIR,
          outputLevel: 1,
          upper,
          upperIsLevel0: true,
          lower,
          grandparents: deeperFiles,
          deeper: [deeperFiles],
          snapshots: snaps,
          outputNumbers: reserved,
          maxFileSize,
          blockSize: 256,
          blockRestartInterval: 16,
          compression: CompressionType.LZ4,
          filterPolicy: new BloomFilterPolicy(10),
          filterScope: 'block',
          verifyChecksums: true,
        };
        const before = [...l1, ...l0Groups.flat()];
        const outcome = runCompaction(fs, task);
        const after = outcome.outputs.flatMap((o) => readTable(fs, o));
        expect(outcome.entriesIn).toBe(before.length);
        expect(after.length).toBe(outcome.entriesOut);
        // Same view for every snapshot and for the newest state, for every key.
        const keys = new Set([...before.map((e) => Buffer.from(e.key).toString('hex')), ...deeperMap.keys()]);
        for (const s of [...snaps, maxSeq]) {
          for (const k of keys) expect(visible(after, deeperMap, k, s)).toBe(visible(before, deeperMap, k, s));
        }
        // At most one entry per key per snapshot stripe.
        const stripeOf = (q: number): number => snaps.filter((s) => q > s).length;
        const seen = new Set<string>();
        for (const e of after) {
          const id = `${Buffer.from(e.key).toString('hex')}/${stripeOf(e.seq)}`;
          expect(seen.has(id)).toBe(false);
          seen.add(id);
        }
        // Outputs are in order, disjoint, and no user key spans two of them.
        for (let i = 1; i < outcome.outputs.length; i++) {
          const prev = outcome.outputs[i - 1]!;
          const cur = outcome.outputs[i]!;
          expect(compareInternal(prev.largest, cur.smallest)).toBeLessThan(0);
          expect(compareBytes(prev.largest.subarray(0, prev.largest.length - 8), cur.smallest.subarray(0, cur.smallest.length - 8))).toBeLessThan(0);
        }
        // With no snapshots and no deeper data, deletions vanish and one version per key remains.
        if (snaps.length === 0 && deeperFiles.length === 0) {
          expect(after.every((e) => e.type === ValueType.VALUE)).toBe(true);
          expect(new Set(after.map((e) => Buffer.from(e.key).toString('hex'))).size).toBe(after.length);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('removes its outputs when an input is corrupt', () => {
    const fs = new MemFileSystem();
    fs.mkdir(DIR);
    const good = writeTable(fs, 10, [{ key: Buffer.from('a'), seq: 1, type: ValueType.VALUE, value: Buffer.alloc(50) }]);
    const bad = writeTable(fs, 11, [{ key: Buffer.from('b'), seq: 2, type: ValueType.VALUE, value: Buffer.alloc(50) }]);
    const bytes = fs.readFile(tableFileName(DIR, 11));
    bytes[3] = bytes[3]! ^ 0xff; // inside the first data block: its checksum fails
    const w = fs.createWritable(tableFileName(DIR, 11));
    w.append(bytes);
    w.close();
    const task: CompactionTask = {
      dir: DIR, outputLevel: 1, upper: [bad, good], upperIsLevel0: true, lower: [], grandparents: [], deeper: [], snapshots: [],
      outputNumbers: [20, 21, 22], maxFileSize: 1 << 20, blockSize: 4096, blockRestartInterval: 16, compression: CompressionType.NONE,
      filterPolicy: null, filterScope: 'block', verifyChecksums: true,
    };
    expect(() => runCompaction(fs, task)).toThrow(/CORRUPTION|checksum/i);
    expect(fs.list(DIR).sort()).toEqual(['000010.ldb', '000011.ldb']);
  });
});
