/**
 * Tables read through a memory map (native/mmap.c, src/native.ts, TableOptions.mapFile,
 * Options.mmapReads): the addon maps a file's bytes exactly and releases them at close; a mapped
 * table answers every lookup and scan exactly as one read with `pread`, without a single
 * `readAt`; damage in a mapped table is the same typed error; a file system that cannot map (the
 * fault-injecting one) reads as before; and a database maps its tables with `mmapReads` (not by
 * default).
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { ErrorCode, SieveError } from '../../src/errors.js';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import { ValueType } from '../../src/format/internal-key.js';
import { FaultyFileSystem } from '../../src/fs/faulty-fs.js';
import type { FileSystem, RandomAccessFile } from '../../src/fs/file-system.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import { nativeAddon } from '../../src/native.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { Table } from '../../src/sstable/table.js';
import { TableBuilder } from '../../src/sstable/table-builder.js';
import { type Entry, hex, lookup, makeEntry, sortEntries } from './table-support.js';

const temp = mkdtempSync(join(tmpdir(), 'sievekv-mmap-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));
let files = 0;
const nodeFs = new NodeFileSystem();

/** A file system over the real one whose table files count their `readAt` calls (and map as the real ones do). */
function countingFs(): { fs: FileSystem; reads: () => number } {
  let reads = 0;
  const fs = Object.create(nodeFs) as FileSystem;
  fs.openReadable = (path: string): RandomAccessFile => {
    const file = nodeFs.openReadable(path);
    const table = path.endsWith('.ldb');
    return {
      size: file.size,
      readAt: (buf, bufOffset, length, position) => {
        if (table) reads++;
        return file.readAt(buf, bufOffset, length, position);
      },
      map: () => file.map?.(),
      close: () => file.close(),
    };
  };
  return { fs, reads: () => reads };
}

function writeTable(entries: readonly Entry[], compression: CompressionType): string {
  const path = join(temp, `${++files}.ldb`);
  const file = nodeFs.createWritable(path);
  const builder = new TableBuilder(file, { compression, filterPolicy: new BloomFilterPolicy(10), blockSize: 512 });
  for (const e of entries) builder.add(e.key, e.value);
  builder.finish();
  file.sync();
  file.close();
  return path;
}

/** Each entry's lookup and a near miss's. */
function lookups(table: Table, entries: readonly Entry[]): string[] {
  const out: string[] = [];
  for (const e of entries) {
    out.push(lookup(table, e.userKey));
    out.push(lookup(table, Uint8Array.of(...e.userKey, 0)));
  }
  return out;
}

/** Everything a table answers: the lookups, then both scans. */
function answers(table: Table, entries: readonly Entry[]): string[] {
  const out = lookups(table, entries);
  const it = table.newIterator();
  for (it.seekToFirst(); it.valid(); it.next()) out.push(`${hex(it.key())}=${hex(it.value())}`);
  for (it.seekToLast(); it.valid(); it.prev()) out.push(`${hex(it.key())}<${hex(it.value())}`);
  it.close();
  return out;
}

const entryArb = fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 24 }), fc.uint8Array({ maxLength: 300 }), fc.boolean());

describe('the addon’s map', () => {
  it('is built here, maps a file exactly, and a closed file’s view reads as empty', () => {
    expect(nativeAddon).not.toBeNull();
    const path = join(temp, 'plain');
    const bytes = Buffer.from(Array.from({ length: 10_000 }, (_, i) => (i * 37) & 0xff));
    writeFileSync(path, bytes);
    const file = nodeFs.openReadable(path);
    const mapped = file.map!()!;
    expect(mapped.length).toBe(bytes.length);
    expect(Buffer.compare(Buffer.from(mapped), bytes)).toBe(0);
    expect(file.map!()!.length).toBe(bytes.length); // one mapping, asked for twice
    file.close();
    expect(mapped.length).toBe(0); // detached: no read of unmapped memory
    expect(file.map!()).toBeUndefined();
  });

  it('maps at most 1,000 files at once; past that they are read, and a close frees a place', () => {
    const path = join(temp, 'small');
    writeFileSync(path, 'table bytes');
    const open = Array.from({ length: 1001 }, () => nodeFs.openReadable(path));
    try {
      const mapped = open.map((f) => f.map!());
      expect(mapped.slice(0, 1000).every((m) => m !== undefined && Buffer.from(m).toString() === 'table bytes')).toBe(true);
      expect(mapped[1000]).toBeUndefined();
      open[0]!.close();
      expect(open[1000]!.map!()?.length).toBe(11);
    } finally {
      for (const f of open) f.close();
    }
  });

  it('maps no empty file, and a bad descriptor is an error, not a crash', () => {
    const path = join(temp, 'empty');
    writeFileSync(path, '');
    const file = nodeFs.openReadable(path);
    expect(file.map!()).toBeUndefined();
    file.close();
    expect(() => nativeAddon!.map(-1, 10)).toThrow(TypeError);
    expect(() => nativeAddon!.map(1 << 30, 10)).toThrow(/Bad file descriptor/);
    const fd = openSync(join(temp, 'plain'), 'r');
    try {
      // Past the file's end a mapping would fault: the addon refuses the length.
      expect(() => nativeAddon!.map(fd, 10_001)).toThrow(RangeError);
      const whole = nativeAddon!.map(fd, 10_000);
      expect(whole.byteLength).toBe(10_000);
      nativeAddon!.unmap(whole);
    } finally {
      closeSync(fd);
    }
  });
});

describe('a mapped table', () => {
  it('answers every lookup and scan as a table read with pread; its lookups read nothing with readAt', () => {
    fc.assert(
      fc.property(fc.array(entryArb, { minLength: 1, maxLength: 150 }), fc.constantFrom(CompressionType.NONE, CompressionType.LZ4, CompressionType.SNAPPY), (raw, compression) => {
        const seen = new Set<string>();
        const entries = sortEntries(
          raw
            .filter(([k]) => !seen.has(hex(k)) && seen.add(hex(k)))
            .map(([k, v, del], i) => makeEntry(k, i + 1, del ? ValueType.DELETION : ValueType.VALUE, del ? new Uint8Array(0) : v)),
        );
        const path = writeTable(entries, compression);
        const counting = countingFs();
        const mapped = Table.open(counting.fs, path, { mapFile: true });
        const read = Table.open(nodeFs, path);
        try {
          // Lookups copy out of the mapping; a scan reads its windows ahead with pread.
          expect(lookups(mapped, entries)).toEqual(lookups(read, entries));
          expect(counting.reads()).toBe(0);
          expect(answers(mapped, entries)).toEqual(answers(read, entries));
        } finally {
          mapped.close();
          read.close();
        }
      }),
      { numRuns: 60 },
    );
  });

  it('reports a damaged block as CORRUPTION, as a table read with pread does', () => {
    const entries = sortEntries(Array.from({ length: 400 }, (_, i) => makeEntry(Buffer.from(`key-${String(i).padStart(5, '0')}`), i + 1, ValueType.VALUE, Buffer.alloc(40, i))));
    const path = writeTable(entries, CompressionType.LZ4);
    const bytes = readFileSync(path);
    bytes[100]! ^= 0x20; // inside the first data block
    writeFileSync(path, bytes);
    for (const mapFile of [true, false]) {
      const table = Table.open(nodeFs, path, { mapFile });
      try {
        let error: unknown;
        try {
          lookup(table, entries[0]!.userKey);
        } catch (err) {
          error = err;
        }
        expect(error).toBeInstanceOf(SieveError);
        expect((error as SieveError).code).toBe(ErrorCode.CORRUPTION);
        expect(lookup(table, entries[399]!.userKey)).toBe(`found ${hex(entries[399]!.value)}`); // the rest reads
      } finally {
        table.close();
      }
    }
  });

  it('meets damage anywhere in the file as a table read with pread does: the same answers or the same error', () => {
    const entries = sortEntries(Array.from({ length: 120 }, (_, i) => makeEntry(Buffer.from(`key-${String(i * 3).padStart(4, '0')}`), i + 1, ValueType.VALUE, Buffer.alloc(30 + (i % 7), 97 + (i % 5)))));
    const clean = readFileSync(writeTable(entries, CompressionType.LZ4));
    const outcome = (path: string, mapFile: boolean): string[] => {
      let table: Table;
      try {
        table = Table.open(nodeFs, path, { mapFile });
      } catch (err) {
        return [`open: ${(err as SieveError).code}`];
      }
      try {
        return answers(table, entries);
      } catch (err) {
        return [`read: ${(err as SieveError).code}`];
      } finally {
        table.close();
      }
    };
    const path = join(temp, 'damaged.ldb');
    for (let at = 0; at < clean.length; at += 53) {
      const bytes = Buffer.from(clean);
      bytes[at]! ^= 1 << (at % 8);
      writeFileSync(path, bytes);
      expect(outcome(path, true), `byte ${at} flipped`).toEqual(outcome(path, false));
    }
  });

  it('lets go of its mapping at close: a lookup after it is CLOSED, an open iterator reads a closed file (IO_ERROR)', () => {
    const entries = sortEntries(Array.from({ length: 300 }, (_, i) => makeEntry(Buffer.from(`key-${String(i).padStart(4, '0')}`), i + 1, ValueType.VALUE, Buffer.alloc(50, i))));
    const path = writeTable(entries, CompressionType.LZ4);
    const maps = (): number => readFileSync('/proc/self/maps', 'utf8').split('\n').filter((l) => l.endsWith(path)).length;
    const table = Table.open(nodeFs, path, { mapFile: true });
    expect(maps()).toBe(1);
    const it = table.newIterator();
    it.seekToFirst();
    table.close();
    expect(maps()).toBe(0);
    expect(() => lookup(table, entries[200]!.userKey)).toThrow(expect.objectContaining({ code: ErrorCode.CLOSED }));
    let error: unknown;
    try {
      for (; it.valid(); it.next());
    } catch (err) {
      error = err;
    }
    expect((error as SieveError).code).toBe(ErrorCode.IO_ERROR);
  });

  it('is read with readAt where the file system cannot map (faults stay injectable)', () => {
    const entries = sortEntries(Array.from({ length: 50 }, (_, i) => makeEntry(Buffer.from(`k${i}`), i + 1, ValueType.VALUE, Buffer.from(`v${i}`))));
    const path = writeTable(entries, CompressionType.LZ4);
    const faulty = new FaultyFileSystem(nodeFs);
    const table = Table.open(faulty, path, { mapFile: true });
    try {
      const disarm = faulty.inject({ ops: ['read'] });
      expect(() => lookup(table, entries[3]!.userKey)).toThrow(SieveError);
      disarm();
      expect(lookup(table, entries[3]!.userKey)).toBe(`found ${hex(entries[3]!.value)}`);
    } finally {
      table.close();
    }
  });
});

describe('a database', () => {
  it('maps its tables with mmapReads, reads the same without (the default), and refuses a non-boolean', async () => {
    const dir = join(temp, 'db');
    const db = await DB.open(dir);
    const keys = Array.from({ length: 3000 }, (_, i) => `key-${String((i * 7919) % 3000).padStart(6, '0')}`);
    for (const k of keys) db.putSync(k, `value of ${k}`.repeat(3));
    await db.compactRange();
    for (const k of keys) expect(db.getSync(k)?.toString()).toBe(`value of ${k}`.repeat(3));
    await db.close();
    const counting = countingFs();
    for (const mmapReads of [true, undefined]) {
      const again = await DB.open(dir, { ...(mmapReads === undefined ? {} : { mmapReads }), fs: counting.fs, blockCacheSize: 0 });
      const before = counting.reads();
      try {
        for (const k of keys) expect(again.getSync(k)?.toString()).toBe(`value of ${k}`.repeat(3));
        expect(again.getSync('key-')).toBeUndefined();
        // No block cache: every lookup reads a block, from the mapping or with readAt.
        if (mmapReads) expect(counting.reads() - before).toBe(0);
        else expect(counting.reads() - before).toBeGreaterThan(keys.length);
        const scanned: string[] = [];
        for await (const [k] of again.iterator()) scanned.push(k.toString());
        expect(scanned).toEqual([...keys].sort());
      } finally {
        await again.close();
      }
      // Mapped, a table's reads after its open are copies; read, each block is a readAt.
    }
    await expect(DB.open(dir, { mmapReads: 'yes' as unknown as boolean })).rejects.toMatchObject({ code: ErrorCode.INVALID_ARGUMENT });
  });
});
