/**
 * Real LevelDB tables (test/fixtures, written by LevelDB 1.20) parsed at the block level with
 * the building blocks alone: footer → index → every data block (checksum verified, snappy
 * decompressed) → every entry; metaindex → filter block, rebuilt byte for byte.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import { bytewiseComparator } from '../../src/format/comparator.js';
import { bytewiseInternalComparator } from '../../src/format/internal-key-comparator.js';
import {
  checkInternalKey,
  MAX_SEQUENCE,
  readSequence,
  readSequenceBigInt,
  readValueType,
  ValueType,
} from '../../src/format/internal-key.js';
import { Block } from '../../src/sstable/block.js';
import { BLOCK_TRAILER_SIZE, decodeBlockContents } from '../../src/sstable/block-trailer.js';
import { FilterBlockBuilder, FilterBlockReader } from '../../src/sstable/filter-block.js';
import { BlockHandle, Footer, LEVELDB_FOOTER_SIZE } from '../../src/sstable/footer.js';
import { fixturePath, readJsonLines } from '../support/fixtures.js';

interface Entry {
  key: Uint8Array; // internal key
  value: Uint8Array;
}
interface DataBlock {
  handle: BlockHandle;
  type: number; // compression type byte from the trailer
  indexKey: Uint8Array;
  entries: Entry[];
}
interface ParsedTable {
  file: string;
  buf: Uint8Array;
  footer: Footer;
  meta: Map<string, BlockHandle>;
  blocks: DataBlock[];
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const icmp = (a: Uint8Array, b: Uint8Array): number => bytewiseInternalComparator.compare(a, 0, a.length, b, 0, b.length);

function readPlain(path: string): Uint8Array {
  const b = readFileSync(path);
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
}

function blockAt(t: { file: string; buf: Uint8Array }, h: BlockHandle): Block {
  expect(h.offset + h.size + BLOCK_TRAILER_SIZE).toBeLessThanOrEqual(t.buf.length - LEVELDB_FOOTER_SIZE);
  return new Block(decodeBlockContents(t.buf, h.offset, h.size, t.file, h.offset), t.file, h.offset);
}

function parseTable(...parts: string[]): ParsedTable {
  const file = parts.join('/');
  const buf = readPlain(fixturePath(...parts));
  const footer = Footer.decode(buf, file);
  const t = { file, buf };

  const meta = new Map<string, BlockHandle>();
  const metaIt = blockAt(t, footer.metaindexHandle).newIterator(bytewiseComparator);
  for (metaIt.seekToFirst(); metaIt.valid(); metaIt.next()) {
    meta.set(Buffer.from(metaIt.key()).toString('latin1'), BlockHandle.decode(metaIt.data, metaIt.valueStart, metaIt.valueEnd));
  }

  const blocks: DataBlock[] = [];
  const indexIt = blockAt(t, footer.indexHandle).newIterator(bytewiseInternalComparator);
  for (indexIt.seekToFirst(); indexIt.valid(); indexIt.next()) {
    const handle = new BlockHandle();
    expect(handle.decodeFrom(indexIt.data, indexIt.valueStart, indexIt.valueEnd)).toBe(indexIt.valueEnd);
    const type = buf[handle.offset + handle.size]!;
    const it = blockAt(t, handle).newIterator(bytewiseInternalComparator);
    const entries: Entry[] = [];
    for (it.seekToFirst(); it.valid(); it.next()) entries.push({ key: it.key().slice(), value: it.value().slice() });
    blocks.push({ handle, type, indexKey: indexIt.key().slice(), entries });
  }
  return { file, buf, footer, meta, blocks };
}

function checkTableInvariants(t: ParsedTable): Entry[] {
  const all = t.blocks.flatMap((b) => b.entries);
  expect(all.length).toBeGreaterThan(0);
  for (const e of all) checkInternalKey(e.key, 0, e.key.length, t.file);
  for (let i = 1; i < all.length; i++) expect(icmp(all[i - 1]!.key, all[i]!.key)).toBeLessThan(0);
  // Index keys separate the blocks: last key of block i <= index key i < first key of block i+1.
  t.blocks.forEach((b, i) => {
    checkInternalKey(b.indexKey, 0, b.indexKey.length, t.file);
    expect(b.entries.length).toBeGreaterThan(0);
    expect(icmp(b.entries[b.entries.length - 1]!.key, b.indexKey)).toBeLessThanOrEqual(0);
    const next = t.blocks[i + 1];
    if (next) expect(icmp(b.indexKey, next.entries[0]!.key)).toBeLessThan(0);
  });
  // Data blocks are laid out back to back from offset 0, each followed by its trailer.
  let offset = 0;
  for (const b of t.blocks) {
    expect(b.handle.offset).toBe(offset);
    offset += b.handle.size + BLOCK_TRAILER_SIZE;
  }
  return all;
}

/** Re-reads every data block through a reused iterator: backward, and a seek to every key. */
function checkIteratorsOnRealBlocks(t: ParsedTable): void {
  const it = blockAt(t, t.blocks[0]!.handle).newIterator(bytewiseInternalComparator);
  for (const b of t.blocks) {
    it.setBlock(blockAt(t, b.handle));
    const back: string[] = [];
    for (it.seekToLast(); it.valid(); it.prev()) back.push(hex(it.key()));
    expect(back).toEqual(b.entries.map((e) => hex(e.key)).reverse());
    for (const e of b.entries) {
      it.seek(e.key);
      expect(hex(it.key())).toBe(hex(e.key));
      expect(hex(it.value())).toBe(hex(e.value));
    }
  }
}

/** Rebuilds the filter block with our builder and LevelDB's Bloom policy (10 bits/key). */
function checkFilterBlock(t: ParsedTable): void {
  const name = 'filter.leveldb.BuiltinBloomFilter2';
  expect([...t.meta.keys()]).toEqual([name]);
  const h = t.meta.get(name)!;
  expect(t.buf[h.offset + h.size]).toBe(0); // filter blocks are stored uncompressed
  const stored = decodeBlockContents(t.buf, h.offset, h.size, t.file, h.offset);

  const policy = new BloomFilterPolicy(10);
  const builder = new FilterBlockBuilder(policy);
  for (const b of t.blocks) {
    builder.startBlock(b.handle.offset);
    for (const e of b.entries) builder.addKey(e.key, 0, e.key.length - 8);
  }
  expect(hex(builder.finish())).toBe(hex(stored));

  const reader = new FilterBlockReader(stored);
  const probe = policy.newProbe();
  for (const b of t.blocks) {
    for (const e of b.entries) {
      probe.setKey(e.key.subarray(0, e.key.length - 8));
      expect(reader.keyMayMatch(b.handle.offset, probe)).toBe(true);
    }
  }
}

describe('ldb-small-nocomp/000012.ldb (uncompressed, level 1)', () => {
  const t = parseTable('ldb-small-nocomp', '000012.ldb');

  it('holds exactly expected.jsonl: one version per key, all values, in order', () => {
    const all = checkTableInvariants(t);
    const expected = readJsonLines<{ key: string; value: string }>('ldb-small-nocomp', 'expected.jsonl');
    expect(all.length).toBe(expected.length);
    all.forEach((e, i) => {
      expect(readValueType(e.key, e.key.length)).toBe(ValueType.VALUE);
      expect(readSequence(e.key, e.key.length)).toBeLessThanOrEqual(MAX_SEQUENCE);
      expect(hex(e.key.subarray(0, e.key.length - 8))).toBe(expected[i]!.key);
      expect(hex(e.value)).toBe(expected[i]!.value);
    });
    expect(t.blocks.every((b) => b.type === 0)).toBe(true);
  });

  it('index keys are shortened separators, some with LevelDB\'s 2^56 - 1 seek sentinel', () => {
    const sentinel = t.blocks.filter((b) => readSequenceBigInt(b.indexKey, b.indexKey.length) === (1n << 56n) - 1n);
    expect(sentinel.length).toBeGreaterThan(0);
    for (const b of sentinel) {
      const last = b.entries[b.entries.length - 1]!.key;
      expect(b.indexKey.length).toBeLessThanOrEqual(last.length);
    }
  });

  it('backward iteration and seeks over LevelDB\'s restart arrays', () => checkIteratorsOnRealBlocks(t));

  it('its filter block is rebuilt byte for byte by FilterBlockBuilder + BloomFilterPolicy(10)', () => checkFilterBlock(t));
});

describe('ldb-snappy-small tables (snappy, levels 0-2)', () => {
  const files = ['000012.ldb', '000025.ldb', '000027.ldb'];
  const tables = files.map((f) => parseTable('ldb-snappy-small', f));

  it('every block checks out, keys strictly increase, snappy and uncompressed blocks both occur', () => {
    let snappy = 0;
    let raw = 0;
    let deletions = 0;
    let shadowed = 0;
    for (const t of tables) {
      const all = checkTableInvariants(t);
      for (const b of t.blocks) {
        expect([0, 1]).toContain(b.type);
        if (b.type === 1) snappy++;
        else raw++;
      }
      for (let i = 0; i < all.length; i++) {
        const k = all[i]!.key;
        if (readValueType(k, k.length) === ValueType.DELETION) deletions++;
        const prev = all[i - 1]?.key;
        if (prev && hex(prev.subarray(0, prev.length - 8)) === hex(k.subarray(0, k.length - 8))) shadowed++;
      }
    }
    expect(snappy).toBeGreaterThan(0);
    expect(raw).toBeGreaterThan(0);
    expect(deletions).toBeGreaterThan(0);
    expect(shadowed).toBeGreaterThan(0);
  });

  it('the metaindex names filter.leveldb.BuiltinBloomFilter2, rebuilt byte for byte', () => {
    for (const t of tables) checkFilterBlock(t);
  });

  it('backward iteration and seeks over every block', () => {
    for (const t of tables) checkIteratorsOnRealBlocks(t);
  });

  it('a flipped byte inside any stored block is caught by its checksum', () => {
    const t = tables[0]!;
    fc.assert(
      fc.property(fc.nat(t.blocks.length - 1), fc.nat(), fc.integer({ min: 1, max: 255 }), (bi, pos, x) => {
        const h = t.blocks[bi]!.handle;
        const copy = t.buf.slice(h.offset, h.offset + h.size + BLOCK_TRAILER_SIZE);
        copy[pos % copy.length] ^= x;
        try {
          decodeBlockContents(copy, 0, h.size, t.file, h.offset);
          expect.unreachable();
        } catch (err) {
          expect(isSieveError(err, 'CORRUPTION')).toBe(true);
          expect(err).toMatchObject({ file: t.file, offset: h.offset });
        }
      }),
      { numRuns: 200 },
    );
  });
});
