/**
 * Table file images kept in memory (resident-files.ts, Table's residentFiles): a table read from
 * often takes an image, which each data block enters once it was read and verified; the table
 * then answers exactly as it did from the file, leaves the file's bytes as they were (blocks are
 * decoded in place and the bytes the LZ4 decoder borrows are put back), never decodes bytes it
 * did not check, and the budget holds at most its bytes, least recently used first out.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import { ValueType } from '../../src/format/internal-key.js';
import { FaultyFileSystem } from '../../src/fs/faulty-fs.js';
import type { MemFileSystem } from '../../src/fs/mem-fs.js';
import { BlockBuilder } from '../../src/sstable/block-builder.js';
import { BLOCK_TRAILER_SIZE, writeBlockTrailer } from '../../src/sstable/block-trailer.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { BlockHandle, Footer, LEVELDB_FOOTER_SIZE } from '../../src/sstable/footer.js';
import { ResidentFiles, type ResidentHolder } from '../../src/sstable/resident-files.js';
import { RESIDENT_AFTER_READS, Table } from '../../src/sstable/table.js';
import { buildTable, type Entry, hex, lookup, makeEntry, newMemFs, sortEntries } from './table-support.js';

const bloom = new BloomFilterPolicy(10);

function holder(log: string[], name: string): ResidentHolder {
  return { evictResident: () => log.push(name) };
}

describe('ResidentFiles', () => {
  it('admits within its capacity, evicts the least recently used first, and forgets released holders', () => {
    const log: string[] = [];
    const budget = new ResidentFiles(100);
    const a = holder(log, 'a');
    const b = holder(log, 'b');
    const c = holder(log, 'c');
    expect(budget.admit(a, 40)).toBe(true);
    expect(budget.admit(b, 40)).toBe(true);
    expect(budget.admit(a, 40)).toBe(false); // already in
    budget.touch(a); // b is now the least recently used
    expect(budget.admit(c, 40)).toBe(true);
    expect(log).toEqual(['b']);
    expect(budget.bytes).toBe(80);
    expect(budget.files).toBe(2);
    expect(budget.admit(holder(log, 'huge'), 101)).toBe(false); // larger than the whole budget: nothing evicted
    expect(log).toEqual(['b']);
    budget.release(a);
    expect(budget.bytes).toBe(40);
    budget.release(a); // idempotent
    expect(budget.bytes).toBe(40);
    expect(log).toEqual(['b']); // a release is not an eviction
  });
});

function entries(n: number, seed: number): Entry[] {
  const out: Entry[] = [];
  for (let i = 0; i < n; i++) {
    const key = new TextEncoder().encode(`key-${String((i * 7919 + seed) % (4 * n)).padStart(8, '0')}`);
    const value = new Uint8Array(60 + (i % 50)).map((_, j) => (j < 30 ? (i * 31 + j) & 0xff : 0x61));
    out.push(makeEntry(key, 1 + i, i % 11 === 0 ? ValueType.DELETION : ValueType.VALUE, i % 11 === 0 ? new Uint8Array(0) : value));
  }
  const seen = new Set<string>();
  return sortEntries(out.filter((e) => !seen.has(hex(e.userKey)) && seen.add(hex(e.userKey))));
}

function build(fs: MemFileSystem, path: string, es: Entry[], compression: CompressionType): void {
  buildTable(fs, path, es, { compression, filterPolicy: bloom, blockSize: 512 });
}

describe('a resident table', () => {
  for (const [name, compression] of [
    ['lz4', CompressionType.LZ4],
    ['snappy', CompressionType.SNAPPY],
    ['none', CompressionType.NONE],
  ] as const) {
    it(`answers as from its file, and leaves the file's bytes unchanged (${name})`, () => {
      const fs = newMemFs();
      const es = entries(600, 3);
      build(fs, '/db/t.ldb', es, compression);
      const before = fs.readFile('/db/t.ldb').slice();
      const budget = new ResidentFiles(1 << 20);
      const plain = Table.open(fs, '/db/t.ldb');
      const resident = Table.open(fs, '/db/t.ldb', { residentFiles: budget });
      fc.assert(
        fc.property(fc.array(fc.nat({ max: es.length + 50 }), { minLength: 1, maxLength: 40 }), (picks) => {
          for (const p of picks) {
            // Present keys, and absent ones between them.
            const key = p < es.length ? es[p]!.userKey : new TextEncoder().encode(`key-${String(p * 13).padStart(8, '0')}x`);
            expect(lookup(resident, key)).toBe(lookup(plain, key));
          }
        }),
        { numRuns: 50 },
      );
      expect(resident.isResident).toBe(true);
      expect(budget.bytes).toBe(resident.fileSize);
      // A full scan in both directions through the resident bytes.
      const it = resident.newIterator();
      let i = 0;
      for (it.seekToFirst(); it.valid(); it.next(), i++) {
        expect(hex(it.key())).toBe(hex(es[i]!.key));
        expect(hex(it.value())).toBe(hex(es[i]!.value));
      }
      expect(i).toBe(es.length);
      for (it.seekToLast(); it.valid(); it.prev()) expect(hex(it.key())).toBe(hex(es[--i]!.key));
      it.close();
      expect(hex(fs.readFile('/db/t.ldb'))).toBe(hex(before));
      resident.close();
      plain.close();
      expect(budget.bytes).toBe(0); // a closed table lets go of its bytes
    });
  }

  it(`becomes resident after ${RESIDENT_AFTER_READS} data block reads from its file, not before`, () => {
    const fs = newMemFs();
    const es = entries(400, 5);
    build(fs, '/db/t.ldb', es, CompressionType.LZ4);
    const table = Table.open(fs, '/db/t.ldb', { residentFiles: new ResidentFiles(1 << 20) });
    expect(table.isResident).toBe(false); // opening reads the index, filter and properties only
    for (let n = 1; n <= RESIDENT_AFTER_READS; n++) {
      // Keys far apart: each lookup reads another block (no block cache here).
      lookup(table, es[(n * 97) % es.length]!.userKey);
      expect(table.isResident).toBe(n === RESIDENT_AFTER_READS);
    }
    table.close();
  });

  it('reads each block into the image when first needed and from memory after; a failed read leaves the block out', () => {
    const mem = newMemFs();
    const es = entries(400, 6).filter((e) => e.type === ValueType.VALUE);
    build(mem, '/db/t.ldb', es, CompressionType.LZ4);
    const fs = new FaultyFileSystem(mem);
    const table = Table.open(fs, '/db/t.ldb', { residentFiles: new ResidentFiles(1 << 20) });
    for (let n = 1; n <= RESIDENT_AFTER_READS; n++) lookup(table, es[(n * 97) % es.length]!.userKey);
    expect(table.isResident).toBe(true);
    const fileReads = (): number => fs.calls.read;
    const e = es[7]!;
    const want = `found ${hex(e.value)}`;
    // Its first read goes to the file, into the image; the next ones do not call the file system.
    let reads = fileReads();
    expect(lookup(table, e.userKey)).toBe(want);
    expect(fileReads()).toBe(reads + 1);
    expect(table.stats.blocksReadFromMemory).toBe(0);
    reads = fileReads();
    for (let i = 0; i < 3; i++) expect(lookup(table, e.userKey)).toBe(want);
    expect(fileReads()).toBe(reads);
    expect(table.stats.blocksReadFromMemory).toBe(3);
    // A block whose read fails is not held: the error reaches the caller, the next read goes to the file.
    const other = es[es.length - 3]!;
    const heal = fs.inject({ ops: ['read'] });
    expect(() => lookup(table, other.userKey)).toThrow(expect.objectContaining({ code: 'IO_ERROR' }));
    heal();
    reads = fileReads();
    expect(lookup(table, other.userKey)).toBe(`found ${hex(other.value)}`);
    expect(fileReads()).toBe(reads + 1);
    expect(lookup(table, other.userKey)).toBe(`found ${hex(other.value)}`);
    expect(fileReads()).toBe(reads + 1);
    expect(table.stats.blocksReadFromMemory).toBe(4);
    // The block at the file's start too.
    const first = es[0]!;
    expect(lookup(table, first.userKey)).toBe(`found ${hex(first.value)}`);
    reads = fileReads();
    expect(lookup(table, first.userKey)).toBe(`found ${hex(first.value)}`);
    expect(fileReads()).toBe(reads);
    expect(table.stats.blocksReadFromMemory).toBe(5);
    // A scan uses the blocks the image holds and reads the others through its windows without
    // adding them (a scan reads each block once): the next scan reads them from the file again.
    const scan = (): number => {
      const it = table.newIterator();
      let i = 0;
      for (it.seekToFirst(); it.valid(); it.next(), i++) expect(hex(it.value())).toBe(hex(es[i]!.value));
      it.close();
      return i;
    };
    const held = table.stats.blocksReadFromMemory;
    expect(scan()).toBe(es.length);
    expect(fileReads()).toBeGreaterThan(reads);
    const usedFromImage = table.stats.blocksReadFromMemory - held;
    expect(usedFromImage).toBeGreaterThan(0); // the blocks the lookups above brought in
    reads = fileReads();
    expect(scan()).toBe(es.length);
    expect(fileReads()).toBeGreaterThan(reads);
    expect(table.stats.blocksReadFromMemory - held).toBeLessThanOrEqual(2 * usedFromImage + 2); // the first blocks of a scan join, no more
    // A seek's block (not in a sequence) joins the image: the same seek again reads nothing.
    const seekTo = (e: Entry): void => {
      const it = table.newIterator();
      it.seek(e.key);
      expect(hex(it.value())).toBe(hex(e.value));
      it.close();
    };
    const target = es[Math.floor(es.length / 2) + 3]!;
    seekTo(target);
    reads = fileReads();
    seekTo(target);
    expect(fileReads()).toBe(reads);
    table.close();
  });

  it('a handle at an offset the image holds, with another size (a crafted index), is read from the file: CORRUPTION, never unchecked bytes', () => {
    const mem = newMemFs();
    const es = entries(300, 8).filter((e) => e.type === ValueType.VALUE);
    build(mem, '/db/t.ldb', es, CompressionType.NONE);
    const bytes = mem.readFile('/db/t.ldb');
    const probe = Table.open(mem, '/db/t.ldb');
    const separators: Uint8Array[] = [];
    const handles: BlockHandle[] = [];
    const index = probe.indexBlock.newIterator(probe.comparator);
    for (index.seekToFirst(); index.valid(); index.next()) {
      separators.push(index.key().slice());
      handles.push(BlockHandle.decode(index.data, index.valueStart, index.valueEnd));
    }
    probe.close();
    expect(handles.length).toBeGreaterThan(3);
    // Block 1's entry now names block 0's offset with the size of blocks 0 and 1 together: its
    // checksum is block 1's, so from the file it fails; the image holds block 0 at that offset.
    const crafted = new BlockBuilder(1);
    separators.forEach((sep, i) => crafted.add(sep, (i === 1 ? new BlockHandle(handles[0]!.offset, handles[1]!.offset + handles[1]!.size - handles[0]!.offset) : handles[i]!).encode()));
    const contents = crafted.finish();
    const footer = Footer.decode(bytes.subarray(bytes.length - LEVELDB_FOOTER_SIZE));
    const indexHandle = new BlockHandle(bytes.length, contents.length);
    const out = new Uint8Array(bytes.length + contents.length + BLOCK_TRAILER_SIZE + LEVELDB_FOOTER_SIZE);
    out.set(bytes);
    out.set(contents, bytes.length);
    writeBlockTrailer(out, bytes.length + contents.length, contents, 0, contents.length, CompressionType.NONE);
    out.set(new Footer(footer.metaindexHandle, indexHandle).encode(), bytes.length + contents.length + BLOCK_TRAILER_SIZE);
    const file = mem.createWritable('/db/crafted.ldb');
    file.append(out);
    file.close();

    const fs = new FaultyFileSystem(mem);
    const table = Table.open(fs, '/db/crafted.ldb', { residentFiles: new ResidentFiles(1 << 20) });
    const inBlock = (b: number): Entry[] => es.filter((e) => table.comparator.compare(e.key, 0, e.key.length, separators[b]!, 0, separators[b]!.length) <= 0 && (b === 0 || table.comparator.compare(e.key, 0, e.key.length, separators[b - 1]!, 0, separators[b - 1]!.length) > 0));
    for (let n = 0; n <= RESIDENT_AFTER_READS; n++) for (const e of inBlock(0)) expect(lookup(table, e.userKey)).toBe(`found ${hex(e.value)}`);
    expect(table.isResident).toBe(true);
    expect(table.stats.blocksReadFromMemory).toBeGreaterThan(0); // block 0 is in the image
    for (let round = 0; round < 2; round++) {
      for (const e of inBlock(1)) {
        const reads = fs.calls.read;
        expect(() => lookup(table, e.userKey)).toThrow(expect.objectContaining({ code: 'CORRUPTION', offset: handles[0]!.offset }));
        expect(fs.calls.read).toBe(reads + 1); // from the file, not block 0's bytes in the image
      }
    }
    for (const e of [...inBlock(0), ...inBlock(2)]) expect(lookup(table, e.userKey)).toBe(`found ${hex(e.value)}`);
    table.close();
  });

  it('with verifyChecksums off, answers as the same table without an image', () => {
    const fs = newMemFs();
    const es = entries(500, 10);
    build(fs, '/db/t.ldb', es, CompressionType.LZ4);
    const plain = Table.open(fs, '/db/t.ldb', { verifyChecksums: false });
    const imaged = Table.open(fs, '/db/t.ldb', { verifyChecksums: false, residentFiles: new ResidentFiles(1 << 20) });
    for (let round = 0; round < 2; round++) for (const e of es) expect(lookup(imaged, e.userKey)).toBe(lookup(plain, e.userKey));
    expect(imaged.stats.blocksReadFromMemory).toBeGreaterThan(es.length / 2);
    imaged.close();
    plain.close();
  });

  it('files that do not fit together: the least recently used goes back to its file and still reads right', () => {
    const fs = newMemFs();
    const a = entries(400, 1);
    const b = entries(400, 2);
    build(fs, '/db/a.ldb', a, CompressionType.LZ4);
    build(fs, '/db/b.ldb', b, CompressionType.LZ4);
    const size = Math.max(fs.size('/db/a.ldb'), fs.size('/db/b.ldb'));
    const budget = new ResidentFiles(size + size / 2);
    const ta = Table.open(fs, '/db/a.ldb', { residentFiles: budget });
    const tb = Table.open(fs, '/db/b.ldb', { residentFiles: budget });
    for (let n = 0; n < 2 * RESIDENT_AFTER_READS; n++) lookup(ta, a[(n * 53) % a.length]!.userKey);
    expect(ta.isResident).toBe(true);
    for (let n = 0; n < 2 * RESIDENT_AFTER_READS; n++) lookup(tb, b[(n * 53) % b.length]!.userKey);
    expect(tb.isResident).toBe(true);
    expect(ta.isResident).toBe(false);
    expect(budget.files).toBe(1);
    // Evicted once, it waits 8 times longer before it asks again: the two do not take turns.
    for (let n = 1; n < 8 * RESIDENT_AFTER_READS; n++) {
      const e = a[(n * 53) % a.length]!;
      expect(lookup(ta, e.userKey)).toBe(e.type === ValueType.DELETION ? 'deleted' : `found ${hex(e.value)}`);
    }
    expect(ta.isResident).toBe(false);
    lookup(ta, a[0]!.userKey);
    expect(ta.isResident).toBe(true);
    expect(tb.isResident).toBe(false);
    // The new image starts empty: what the old one held is read from the file again, then from memory.
    const fromMemory = ta.stats.blocksReadFromMemory;
    const again = a[(1 * 53) % a.length]!;
    lookup(ta, again.userKey);
    expect(ta.stats.blocksReadFromMemory).toBe(fromMemory);
    lookup(ta, again.userKey);
    expect(ta.stats.blocksReadFromMemory).toBe(fromMemory + 1);
    for (const e of a) expect(lookup(ta, e.userKey)).toBe(e.type === ValueType.DELETION ? 'deleted' : `found ${hex(e.value)}`);
    ta.close();
    tb.close();
  });

  it('checks each data block as it enters the image: a damaged one fails every read of it, the others answer', () => {
    const fs = newMemFs();
    const es = entries(600, 4);
    // Uncompressed: a flipped value byte decodes, so only the checksum can tell.
    build(fs, '/db/t.ldb', es, CompressionType.NONE);
    // Damage one byte inside a data block in the middle of the file.
    const probe = Table.open(fs, '/db/t.ldb');
    const index = probe.indexBlock.newIterator(probe.comparator);
    const handles: BlockHandle[] = [];
    for (index.seekToFirst(); index.valid(); index.next()) {
      const h = new BlockHandle();
      h.decodeFrom(index.data, index.valueStart, index.valueEnd);
      handles.push(h);
    }
    probe.close();
    const damaged = handles[handles.length >> 1]!;
    const bytes = fs.readFile('/db/t.ldb');
    bytes[damaged.offset + (damaged.size >> 1)]! ^= 0x10;
    const out = fs.createWritable('/db/t.ldb');
    out.append(bytes);
    out.close();

    const table = Table.open(fs, '/db/t.ldb', { residentFiles: new ResidentFiles(1 << 20) });
    for (let n = 0; table.stats.blocksRead < RESIDENT_AFTER_READS; n++) lookup(table, es[n * 7]!.userKey);
    expect(table.isResident).toBe(true);
    const failed = [0, 0];
    for (let round = 0; round < 2; round++) {
      for (const e of es) {
        try {
          expect(lookup(table, e.userKey)).toBe(e.type === ValueType.DELETION ? 'deleted' : `found ${hex(e.value)}`);
        } catch (err) {
          expect(err).toMatchObject({ code: 'CORRUPTION', offset: damaged.offset });
          failed[round]!++;
        }
      }
    }
    expect(failed[0]).toBeGreaterThan(0); // every read of the damaged block, in both rounds
    expect(failed[1]).toBe(failed[0]);
    expect(table.stats.blocksReadFromMemory).toBeGreaterThan(es.length);
    table.close();
  });

  it('a file larger than the whole budget is never held', () => {
    const fs = newMemFs();
    const es = entries(400, 9);
    build(fs, '/db/t.ldb', es, CompressionType.LZ4);
    const budget = new ResidentFiles(fs.size('/db/t.ldb') - 1);
    const table = Table.open(fs, '/db/t.ldb', { residentFiles: budget });
    for (const e of es) lookup(table, e.userKey);
    expect(table.isResident).toBe(false);
    expect(budget.bytes).toBe(0);
    table.close();
  });
});
