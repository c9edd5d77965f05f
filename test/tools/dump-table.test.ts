/**
 * `sievekv dump` on tables, run in-process: LevelDB-made fixture tables (entries, summary,
 * --verify, --stats), damaged copies (the bad block is named by offset), tables sievekv builds
 * (properties, lz4, Ribbon and whole-table filters), and files that are missing or not tables.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import { RibbonFilterPolicy } from '../../src/filter/ribbon.js';
import { compareInternalKeys, encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import { CompressionType } from '../../src/sstable/compression.js';
import { Table } from '../../src/sstable/table.js';
import { TableBuilder } from '../../src/sstable/table-builder.js';
import { fixturePath, readJsonLines } from '../support/fixtures.js';
import { rng, testSeed } from '../support/seed.js';
import { flipped, jsonLines, type JsonLine, memFsWith, runCli } from './cli-support.js';

const NOCOMP = fixturePath('ldb-small-nocomp', '000012.ldb');
const SNAPPY = ['000012.ldb', '000025.ldb', '000027.ldb'].map((f) => fixturePath('ldb-snappy-small', f));
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));

interface EntryLine {
  kind: 'entry';
  key: string;
  seq: number;
  type: 'value' | 'deletion';
  value: string;
}

/**
 * The JSON Lines of a dump: the table line, an index line per data block (gathered here into
 * `table.index`), then the entries.
 */
async function dumpJson(path: string, fs = new NodeFileSystem()): Promise<{ table: JsonLine; entries: EntryLine[] }> {
  const r = await runCli(['dump', '--json', path], fs);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const lines = jsonLines(r.stdout);
  expect(lines[0]!.kind).toBe('table');
  // The lines come in this order, each kind in one run.
  const order = ['table', 'footer', 'metaindex', 'properties', 'filter', 'index', 'entry'];
  const kinds = lines.map((l) => order.indexOf(l.kind!));
  expect(kinds.every((k, i) => k >= 0 && (i === 0 || k >= kinds[i - 1]!))).toBe(true);
  const of = (kind: string): JsonLine[] => lines.filter((l) => l.kind === kind).map(({ kind: _, ...rest }) => rest);
  const index = of('index');
  expect(index.map((l) => l.block)).toEqual(index.map((_, i) => i));
  for (const l of index) expect(Object.keys(l)).toEqual(['block', 'offset', 'size', 'compression', 'key']);
  expect(index.length).toBe(lines[0]!.dataBlocks);
  expect(of('footer').length).toBe(1);
  expect(of('properties').length).toBeLessThanOrEqual(1);
  const table = { ...lines[0]!, footer: of('footer')[0], metaindex: of('metaindex'), properties: of('properties')[0] ?? null, filters: of('filter'), index };
  return { table, entries: lines.filter((l) => l.kind === 'entry') as unknown as EntryLine[] };
}

/** `dump --verify --json`: the fault lines, then the verify line. */
function verifyJson(stdout: string): { ok: boolean; dataBlocks: number; faults: { kind: string; offset: number; reason: string }[] } {
  const lines = jsonLines(stdout);
  const v = lines.at(-1)!;
  expect(v.kind).toBe('verify');
  const faults = lines.slice(0, -1);
  for (const f of faults) expect(f.kind).toBe('fault');
  expect(v.faults).toBe(faults.length);
  return { ok: v.ok as boolean, dataBlocks: v.dataBlocks as number, faults: faults.map((f) => ({ kind: f.block as string, offset: f.offset as number, reason: f.reason as string })) };
}

describe('dump of LevelDB-made tables', () => {
  it('ldb-small-nocomp: --json entries are expected.jsonl, all values, in the exact line format', async () => {
    const { table, entries } = await dumpJson(NOCOMP);
    const expected = readJsonLines<{ key: string; value: string }>('ldb-small-nocomp', 'expected.jsonl');
    expect(entries.map((e) => [e.key, e.value])).toEqual(expected.map((e) => [e.key, e.value]));
    expect(entries.every((e) => e.type === 'value')).toBe(true);
    expect(table.entries).toBe(expected.length);
    // The line format is a contract: field order and types.
    for (const e of entries.slice(0, 50)) {
      expect(Object.keys(e)).toEqual(['kind', 'key', 'seq', 'type', 'value']);
      expect(Number.isSafeInteger(e.seq)).toBe(true);
    }
    const text = (await runCli(['dump', '--json', NOCOMP])).stdout.split('\n').find((l) => l.startsWith('{"kind":"entry"'))!;
    expect(text).toMatch(/^\{"kind":"entry","key":"[0-9a-f]*","seq":\d+,"type":"value","value":"[0-9a-f]*"\}$/);
  });

  it('ldb-small-nocomp: the summary names the footer, index, Bloom filter (bits/key, k) and no properties', async () => {
    const { table } = await dumpJson(NOCOMP);
    const size = readFileSync(NOCOMP).length;
    expect(table.fileSize).toBe(size);
    const footer = table.footer as { index: { offset: number; size: number }; metaindex: { offset: number; size: number } };
    expect(footer.index.offset + footer.index.size + 5 + 48).toBe(size); // the index block is last
    expect(table.footer).toMatchObject({ format: 'leveldb', formatVersion: 0, size: 48 });
    expect(table.properties).toBeNull();
    const index = table.index as { offset: number; size: number }[];
    expect(table.dataBlocks).toBe(index.length);
    expect(index[0]!.offset).toBe(0);
    for (let i = 1; i < index.length; i++) expect(index[i]!.offset).toBe(index[i - 1]!.offset + index[i - 1]!.size + 5);
    const [filter] = table.filters as { policy: string; scope: string; keys: number; bitsPerKey: number; bloomK: number[] }[];
    expect(filter!.policy).toBe('leveldb.BuiltinBloomFilter2');
    expect(filter!.scope).toBe('block');
    expect(filter!.keys).toBe(1900);
    // LevelDB wrote 10 bits/key: k = floor(10 · 0.69) = 6; small filters round up to bytes and 64 bits.
    expect(filter!.bloomK).toEqual([6]);
    expect(filter!.bitsPerKey).toBeGreaterThanOrEqual(10);
    expect(filter!.bitsPerKey).toBeLessThan(10.5);
  });

  it('ldb-snappy-small tables: entries strictly ordered, deletions included, the same as Table reads them', async () => {
    let deletions = 0;
    for (const path of SNAPPY) {
      const { table, entries } = await dumpJson(path);
      expect(entries.length).toBe(table.entries);
      expect(entries.filter((e) => e.type === 'deletion').length).toBe(table.deletions);
      deletions += table.deletions as number;
      const keys = entries.map((e) => encodeInternalKey(unhex(e.key), e.seq, e.type === 'value' ? ValueType.VALUE : ValueType.DELETION));
      for (let i = 1; i < keys.length; i++) {
        expect(compareInternalKeys(keys[i - 1]!, 0, keys[i - 1]!.length, keys[i]!, 0, keys[i]!.length)).toBeLessThan(0);
      }
      for (const e of entries) if (e.type === 'deletion') expect(e.value).toBe('');
      // The database's own reader sees the same entries.
      const t = Table.open(new NodeFileSystem(), path);
      const it = t.newIterator();
      const viaTable: string[] = [];
      for (it.seekToFirst(); it.valid(); it.next()) viaTable.push(`${hex(it.key())}/${hex(it.value())}`);
      it.close();
      t.close();
      expect(keys.map((k, i) => `${hex(k)}/${entries[i]!.value}`)).toEqual(viaTable);
    }
    expect(deletions).toBeGreaterThan(0);
  });

  it('text dump: header lines, then one line per entry with printable text quoted and binary in 0x-hex', async () => {
    const r = await runCli(['dump', SNAPPY[2]!]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`table: ${SNAPPY[2]} (${readFileSync(SNAPPY[2]!).length} bytes)`);
    expect(lines).toContain('properties: none');
    expect(lines.some((l) => l.startsWith('filter: leveldb.BuiltinBloomFilter2, per block'))).toBe(true);
    const at = lines.findIndex((l) => l.startsWith('entries: '));
    const entryLines = lines.slice(at + 1);
    const { entries } = await dumpJson(SNAPPY[2]!);
    expect(entryLines.length).toBe(entries.length);
    expect(entryLines.every((l) => /^ {2}(0x[0-9a-f]*|".*") @ \d+ : (deletion|value => (0x[0-9a-f]*|".*"))$/.test(l))).toBe(true);
  });

  it('--verify: OK with one summary line on every fixture table', async () => {
    for (const path of [NOCOMP, ...SNAPPY]) {
      const r = await runCli(['dump', '--verify', path]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^OK ${path.replace(/[.]/g, '\\.')}: \\d+ blocks \\(\\d+ data\\) and \\d+ entries verified, filter checked\\n$`));
    }
  });

  it('--stats: block sizes, trailers and footer add up to the file; ratios and counts agree with the dump', async () => {
    for (const path of [NOCOMP, ...SNAPPY]) {
      const r = await runCli(['dump', '--stats', '--json', path]);
      expect(r.code).toBe(0);
      const [s] = jsonLines(r.stdout) as unknown as {
        fileSize: number;
        blocks: Record<string, number>;
        bytes: Record<string, number>;
        trailerBytes: number;
        footerBytes: number;
        rawDataBytes: number;
        storedDataBytes: number;
        compressionRatio: number;
        compression: Record<string, number>;
        entries: number;
        keysPerFilter: { min: number; avg: number; max: number };
      }[];
      const blockBytes = Object.values(s!.bytes).reduce((a, b) => a + b, 0);
      const blocks = Object.values(s!.blocks).reduce((a, b) => a + b, 0);
      expect(s!.trailerBytes).toBe(5 * blocks);
      expect(blockBytes + s!.trailerBytes + s!.footerBytes).toBeLessThanOrEqual(s!.fileSize);
      expect(blockBytes + s!.trailerBytes + s!.footerBytes).toBe(s!.fileSize); // LevelDB leaves no gaps
      expect(Object.values(s!.compression).reduce((a, b) => a + b, 0)).toBe(blocks);
      expect(s!.compressionRatio).toBeCloseTo(s!.rawDataBytes / s!.storedDataBytes, 10);
      const { table } = await dumpJson(path);
      expect(s!.blocks.data).toBe(table.dataBlocks);
      expect(s!.entries).toBe(table.entries);
      expect(s!.keysPerFilter.min).toBeLessThanOrEqual(s!.keysPerFilter.avg);
      expect(s!.keysPerFilter.avg).toBeLessThanOrEqual(s!.keysPerFilter.max);
      if (path === NOCOMP) {
        expect(s!.compression).toEqual({ none: blocks });
        expect(s!.compressionRatio).toBe(1);
      } else {
        expect(s!.compression.snappy).toBeGreaterThan(0);
        expect(s!.compressionRatio).toBeGreaterThan(1);
      }
    }
    const text = await runCli(['dump', '--stats', NOCOMP]);
    expect(text.stdout).toMatch(/^keys per filter +min \d+ avg [\d.]+ max \d+ /m);
  });
});

describe('dump of damaged tables', () => {
  const original = new Uint8Array(readFileSync(NOCOMP));
  const PATH = '/d/000012.ldb';

  it('a flipped byte in a data block: --verify exits 1 naming that block, offset and size; the other blocks verify', async () => {
    const { table } = await dumpJson(NOCOMP);
    const index = table.index as { offset: number; size: number }[];
    const next = rng(testSeed());
    for (let round = 0; round < 3; round++) {
      const victim = index[1 + Math.floor(next() * (index.length - 2))]!;
      const fs = memFsWith({ [PATH]: flipped(original, victim.offset + Math.floor(next() * victim.size)) });
      const r = await runCli(['dump', '--verify', PATH], fs);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`sievekv: ${PATH}: bad data block at offset ${victim.offset} (size ${victim.size}): block checksum mismatch\n`);
      const j = await runCli(['dump', '--verify', '--json', PATH], fs);
      expect(j.code).toBe(1);
      const v = verifyJson(j.stdout);
      expect(v.ok).toBe(false);
      expect(v.faults.map((f) => [f.kind, f.offset])).toEqual([['data', victim.offset]]);
      expect(v.dataBlocks).toBe(index.length - 1);
      // A plain dump lists the entries before the bad block, then fails with the same line.
      const d = await runCli(['dump', '--json', PATH], fs);
      expect(d.code).toBe(1);
      expect(d.stderr).toBe(r.stderr);
    }
  });

  it('a flipped byte in the index or filter block is named too; a bad index stops the walk', async () => {
    const { table } = await dumpJson(NOCOMP);
    const footer = table.footer as { index: { offset: number; size: number } };
    const [filter] = table.metaindex as { name: string; offset: number; size: number }[];
    const idx = await runCli(['dump', '--verify', PATH], memFsWith({ [PATH]: flipped(original, footer.index.offset + 7) }));
    expect(idx.code).toBe(1);
    expect(idx.stderr).toBe(`sievekv: ${PATH}: bad index block at offset ${footer.index.offset} (size ${footer.index.size}): block checksum mismatch\n`);
    const flt = await runCli(['dump', '--verify', PATH], memFsWith({ [PATH]: flipped(original, filter!.offset + 3) }));
    expect(flt.code).toBe(1);
    expect(flt.stderr).toBe(
      `sievekv: ${PATH}: bad filter block ${filter!.name} at offset ${filter!.offset} (size ${filter!.size}): block checksum mismatch\n`,
    );
  });

  it('a data block with a good checksum but keys out of order is a bad block too', async () => {
    const { table } = await dumpJson(NOCOMP);
    const victim = (table.index as { offset: number; size: number }[])[2]!;
    const damaged = new Uint8Array(original);
    const block = damaged.subarray(victim.offset, victim.offset + victim.size);
    // Entry 0: varint shared (0), varint non_shared, varint value_len, key. Make its first byte 0xff.
    let p = 0;
    for (let field = 0; field < 3; field++) while (block[p++]! >= 0x80);
    expect(block[p]).toBeLessThan(0xff);
    block[p] = 0xff;
    const { writeBlockTrailer } = await import('../../src/sstable/block-trailer.js');
    writeBlockTrailer(damaged, victim.offset + victim.size, block, 0, block.length, CompressionType.NONE);
    const fs = memFsWith({ [PATH]: damaged });
    const r = await runCli(['dump', '--verify', PATH], fs);
    expect(r.code).toBe(1);
    const [first, more, end] = r.stderr.split('\n');
    expect(first).toMatch(
      new RegExp(`^sievekv: ${PATH}: bad data block at offset ${victim.offset} \\(size ${victim.size}\\): entry 1 \\(.+\\) is not after the key before it \\(0xff.+\\)$`),
    );
    // The filter, rightly, does not hold the invented key either.
    expect([more, end]).toEqual([`sievekv: ${PATH}: 1 more bad block`, '']);
    const v = verifyJson((await runCli(['dump', '--verify', '--json', PATH], fs)).stdout);
    expect(v.dataBlocks).toBe((table.index as unknown[]).length - 1);
    expect(v.faults.map((f) => f.kind)).toEqual(['data', 'filter']);
    expect(v.faults[1]!.reason).toMatch(new RegExp(`^filter \\d+ \\(data block at offset ${victim.offset}\\) does not match key 0xff`));
  });

  it('two bad blocks: the first by offset is named, and the count of the others', async () => {
    const { table } = await dumpJson(NOCOMP);
    const index = table.index as { offset: number; size: number }[];
    const bytes = flipped(flipped(original, index[9]!.offset + 1), index[3]!.offset + 1);
    const r = await runCli(['dump', '--verify', PATH], memFsWith({ [PATH]: bytes }));
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')).toEqual([
      `sievekv: ${PATH}: bad data block at offset ${index[3]!.offset} (size ${index[3]!.size}): block checksum mismatch`,
      `sievekv: ${PATH}: 1 more bad block`,
      '',
    ]);
  });

  it('a file too short, a wrong magic, or a truncated table: one line naming the footer', async () => {
    const short = await runCli(['dump', PATH], memFsWith({ [PATH]: original.subarray(0, 20) }));
    expect(short.code).toBe(1);
    expect(short.stderr).toBe(`sievekv: ${PATH}: bad footer at offset 0 (size 20): file too short to be a table (20 bytes)\n`);
    const cut = original.subarray(0, original.length - 100);
    const truncated = await runCli(['dump', '--verify', PATH], memFsWith({ [PATH]: cut }));
    expect(truncated.code).toBe(1);
    expect(truncated.stderr).toMatch(new RegExp(`^sievekv: ${PATH}: bad footer at offset ${cut.length - 48} \\(size 48\\): not an sstable \\(bad magic number\\)\\n$`));
  });

  it('a missing file is one clear line on stderr and exit 1; so is a directory', async () => {
    const r = await runCli(['dump', 'no-such-dir/000123.ldb']);
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'sievekv: IO_ERROR: cannot open no-such-dir/000123.ldb: no such file\n' });
    const d = await runCli(['dump', fixturePath('ldb-small-nocomp')]);
    expect(d.code).toBe(1);
    expect(d.stderr).toBe(`sievekv: IO_ERROR: cannot open ${fixturePath('ldb-small-nocomp')}: is a directory\n`);
  });
});

describe('dump of tables sievekv writes', () => {
  function build(options: ConstructorParameters<typeof TableBuilder>[1], n = 3000): { fs: ReturnType<typeof memFsWith>; keys: number } {
    const fs = memFsWith({});
    fs.mkdir('/t');
    const file = fs.createWritable('/t/000007.ldb');
    const b = new TableBuilder(file, options);
    const next = rng(testSeed() ^ 0x7ab1e);
    let seq = 100000;
    let users = 0;
    for (let i = 0; i < n; i++) {
      const user = new TextEncoder().encode(`key-${String(i).padStart(6, '0')}`);
      users++;
      const versions = next() < 0.2 ? 2 : 1;
      for (let v = 0; v < versions; v++) {
        const type = v === 1 || next() < 0.1 ? ValueType.DELETION : ValueType.VALUE;
        const value = type === ValueType.VALUE ? new TextEncoder().encode(`value ${i} `.repeat(1 + Math.floor(next() * 8))) : new Uint8Array(0);
        b.add(encodeInternalKey(user, seq--, type), value);
      }
    }
    b.finish();
    file.close();
    return { fs, keys: users };
  }

  it('--json keeps every line short however many blocks: the index is a line per block', async () => {
    const small = build({ compression: CompressionType.NONE, blockSize: 4096 }, 300);
    const large = build({ compression: CompressionType.NONE, blockSize: 256 }, 3000);
    const lines = async (fs: ReturnType<typeof memFsWith>): Promise<string[]> => (await runCli(['dump', '--json', '/t/000007.ldb'], fs)).stdout.trimEnd().split('\n');
    const few = await lines(small.fs);
    const many = await lines(large.fs);
    const blocks = many.filter((l) => l.startsWith('{"kind":"index"'));
    expect(blocks.length).toBeGreaterThan(300);
    // The lines before the index do not grow with the blocks; no line is long.
    const head = (ls: string[]): number => ls.findIndex((l) => l.startsWith('{"kind":"index"'));
    expect(head(many)).toBe(head(few));
    for (const l of many) expect(l.length).toBeLessThan(500);
  });

  it('lz4 with a per-block Bloom filter: properties shown and cross-checked, verify OK, stats consistent', async () => {
    const { fs, keys } = build({ compression: CompressionType.LZ4, filterPolicy: new BloomFilterPolicy(10) });
    const { table, entries } = await dumpJson('/t/000007.ldb', fs);
    const props = table.properties as Record<string, unknown>;
    expect(props.numEntries).toBe(entries.length);
    expect(props.numDeletions).toBe(entries.filter((e) => e.type === 'deletion').length);
    expect(props.numUserKeys).toBe(keys);
    expect(props.compression).toBe('lz4');
    expect(Math.abs((props.keySketchEstimate as number) - keys) / keys).toBeLessThan(0.06);
    const v = await runCli(['dump', '--verify', '/t/000007.ldb'], fs);
    expect(v.code).toBe(0);
    const s = jsonLines((await runCli(['dump', '--stats', '--json', '/t/000007.ldb'], fs)).stdout)[0] as unknown as {
      compression: Record<string, number>;
      compressionRatio: number;
      bytes: Record<string, number>;
      trailerBytes: number;
      footerBytes: number;
      fileSize: number;
    };
    expect(s.compression.lz4).toBeGreaterThan(0);
    expect(s.compressionRatio).toBeGreaterThan(1);
    expect(Object.values(s.bytes).reduce((a, b) => a + b, 0) + s.trailerBytes + s.footerBytes).toBe(s.fileSize);
  });

  it('the footer: RocksDB format_version 2 for lz4, LevelDB for snappy and none, in text, --json and --stats', async () => {
    for (const [compression, text, format, size] of [
      [CompressionType.LZ4, 'RocksDB block-based, format_version 2, checksum crc32c, 53 bytes', 'rocksdb', 53],
      [CompressionType.SNAPPY, "LevelDB (RocksDB's format_version 0), 48 bytes", 'leveldb', 48],
      [CompressionType.NONE, "LevelDB (RocksDB's format_version 0), 48 bytes", 'leveldb', 48],
    ] as const) {
      const { fs } = build({ compression }, 300);
      const fileSize = fs.readFile('/t/000007.ldb').length;
      const lines = (await runCli(['dump', '/t/000007.ldb'], fs)).stdout.split('\n');
      expect(lines[1]).toBe(`footer: ${text}`);
      const { table } = await dumpJson('/t/000007.ldb', fs);
      const footer = table.footer as { format: string; formatVersion: number; size: number; index: { offset: number; size: number } };
      expect(footer).toMatchObject({ format, formatVersion: format === 'rocksdb' ? 2 : 0, size });
      expect(footer.index.offset + footer.index.size + 5 + size).toBe(fileSize); // the index block, then the footer
      const s = jsonLines((await runCli(['dump', '--stats', '--json', '/t/000007.ldb'], fs)).stdout)[0] as unknown as { footerBytes: number };
      expect(s.footerBytes).toBe(size);
      expect((await runCli(['dump', '--verify', '/t/000007.ldb'], fs)).code).toBe(0);
    }
  });

  it("a RocksDB footer of another format_version: one line naming the 53-byte footer and the version", async () => {
    const { fs } = build({ compression: CompressionType.LZ4 }, 100);
    const bytes = new Uint8Array(fs.readFile('/t/000007.ldb'));
    bytes[bytes.length - 12] = 5; // format_version 2 → 5
    const r = await runCli(['dump', '/t/x.ldb'], memFsWith({ '/t/x.ldb': bytes }));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(`^sievekv: /t/x\\.ldb: bad footer at offset ${bytes.length - 53} \\(size 53\\): table format_version 5: damaged, or a RocksDB table of a format_version sievekv does not read`),
    );
  });

  it('a whole-table Ribbon filter: one filter over the distinct user keys, checked key by key', async () => {
    const { fs, keys } = build({ compression: CompressionType.NONE, filterPolicy: new RibbonFilterPolicy(10), filterScope: 'table' });
    const { table } = await dumpJson('/t/000007.ldb', fs);
    const [f] = table.filters as { policy: string; scope: string; filters: number; keys: number; keysPerFilter: { min: number }; ribbonResultBits: number[] }[];
    expect(f!.policy).toBe('sievekv.Ribbon1');
    expect(f!.scope).toBe('table');
    expect(f!.filters).toBe(1);
    expect(f!.keys).toBe(keys);
    expect(f!.keysPerFilter.min).toBe(keys);
    expect(f!.ribbonResultBits.length).toBe(1);
    const v = await runCli(['dump', '--verify', '/t/000007.ldb'], fs);
    expect(v.stdout).toMatch(/^OK .*filter checked\n$/);
  });

  it('a filter that misses a key of its table fails --verify (a filter must never say no to a key it holds)', async () => {
    const { fs } = build({ compression: CompressionType.NONE, filterPolicy: new BloomFilterPolicy(10) }, 400);
    const bytes = fs.readFile('/t/000007.ldb');
    const { table } = await dumpJson('/t/000007.ldb', fs);
    const filter = (table.metaindex as { name: string; offset: number; size: number }[]).find((m) => m.name.startsWith('filter.'))!;
    // Clear the first filter's bit array and re-checksum the block, so only the filter's meaning is wrong.
    const damaged = new Uint8Array(bytes);
    const { getFixed32 } = await import('../../src/format/coding.js');
    const { writeBlockTrailer } = await import('../../src/sstable/block-trailer.js');
    const contents = damaged.subarray(filter.offset, filter.offset + filter.size);
    const arrayOffset = getFixed32(contents, contents.length - 5);
    const firstEnd = getFixed32(contents, arrayOffset + 4);
    contents.fill(0, 0, firstEnd - 1); // keep k, the filter's last byte
    writeBlockTrailer(damaged, filter.offset + filter.size, contents, 0, contents.length, CompressionType.NONE);
    const r = await runCli(['dump', '--verify', '/t/x.ldb'], memFsWith({ '/t/x.ldb': damaged }));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^sievekv: /t/x\\.ldb: bad filter block ${filter.name.replace(/\./g, '\\.')} at offset ${filter.offset} \\(size ${filter.size}\\): filter 0 \\(data block at offset 0\\) does not match key "key-000000" @ \\d+ : \\w+\\n$`));
  });
});
