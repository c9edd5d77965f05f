/**
 * `sievekv dump FILE.ldb`: a table's footer, metaindex, properties, index, filter summary and
 * entries (text for people, JSON Lines with `--json`), `--verify` (every block checked, the first
 * bad one reported) and `--stats` (block counts, sizes, compression, keys per filter). The
 * reading and checking is TableInspector's; this file only formats.
 *
 * JSON Lines contract (stable; tests and scripts parse it). Every line stays short: what a table
 * holds several of (metaindex entries, filters, index entries, entries, faults) gets a line each.
 * A dump is, in this order:
 *   {"kind":"table", file, fileSize, dataBlocks, entries, deletions}
 *   {"kind":"footer", format:"leveldb"|"rocksdb", formatVersion:0|2, size:48|53, metaindex, index}
 *   {"kind":"metaindex", name, offset, size}               one per metaindex entry
 *   {"kind":"properties", …}                               if the table has a properties block
 *   {"kind":"filter", policy, scope, filters, keys, …}     one per filter (FilterSummary)
 *   {"kind":"index","block":<i>,"offset":<n>,"size":<n>,"compression":"<name>","key":"<hex>"}
 *                                                          one per data block
 *   {"kind":"entry","key":"<hex>","seq":<n>,"type":"value"|"deletion","value":"<hex>"}
 * `--verify`: {"kind":"fault","block":"data"|…, name?, offset, size, reason} per bad block, then
 *   {"kind":"verify","ok":<bool>, file, blocks, dataBlocks, entries, faults:<count>}
 * `--stats`: {"kind":"stats", …}                           see `tableStats`
 */
import type { FileSystem } from '../fs/file-system.js';
import { getFixed32 } from '../format/coding.js';
import {
  INTERNAL_KEY_TRAILER_SIZE,
  MAX_SEQUENCE_SEEK_TRAILER_HI,
  MAX_SEQUENCE_SEEK_TRAILER_LO,
  ValueType,
} from '../format/internal-key.js';
import { compressionTypeName } from '../sstable/compression.js';
import type { FooterFormat } from '../sstable/footer.js';
import type { TableProperties } from '../sstable/table-properties.js';
import { BLOCK_TRAILER_SIZE } from '../sstable/block-trailer.js';
import { SieveError } from '../errors.js';
import type { FilterSummary, CountSummary } from './filter-summary.js';
import { formatSize, showBytes, toHex } from './format-bytes.js';
import type { LineWriter } from './output.js';
import { type BlockFault, type BlockKind, TableInspector, type TableInspection, describeKey } from './table-inspector.js';

export interface DumpFlags {
  json: boolean;
  verify: boolean;
  stats: boolean;
}

/** Dumps the table at `path` (shown as `shown`); returns the exit code. */
export function dumpTable(fs: FileSystem, path: string, shown: string, flags: DumpFlags, out: LineWriter, err: (line: string) => void): number {
  const inspector = TableInspector.open(fs, path);
  try {
    const insp = inspector.inspect();
    if (flags.verify || flags.stats) {
      if (flags.verify) writeVerify(insp, shown, flags.json, out);
      if (flags.stats) writeStats(insp, flags.json, out);
      if (insp.faults.length > 0) {
        reportFaults(insp.faults, shown, err);
        return 1;
      }
      return 0;
    }
    if (!insp.complete) {
      reportFaults(insp.faults, shown, err);
      return 1;
    }
    if (flags.json) {
      for (const line of tableSummaryJson(insp, shown)) out.json(line);
      const compression = blockCompressions(insp);
      insp.index.forEach((e, i) => out.json({ kind: 'index', block: i, offset: e.offset, size: e.size, compression: compression(e.offset), key: toHex(userKeyOf(e.separator)) }));
    } else {
      writeSummaryText(insp, shown, out);
    }
    if (!flags.json) out.line(`entries: ${insp.entries} (${insp.deletions} deletions)`);
    try {
      for (const e of inspector.entries(insp.index)) {
        const deletion = e.type === ValueType.DELETION;
        if (flags.json) {
          out.line(
            `{"kind":"entry","key":"${toHex(e.userKey)}","seq":${e.sequence},"type":"${deletion ? 'deletion' : 'value'}","value":"${deletion ? '' : toHex(e.value)}"}`,
          );
        } else {
          out.line(`  ${showBytes(e.userKey)} @ ${e.sequence} : ${deletion ? 'deletion' : `value => ${showBytes(e.value)}`}`);
        }
      }
    } catch (e) {
      if (!(e instanceof SieveError)) throw e;
      // The inspection found this block bad too; its faults say which, in file order.
    }
    if (insp.faults.length > 0) {
      reportFaults(insp.faults, shown, err);
      return 1;
    }
    return 0;
  } finally {
    inspector.close();
  }
}

/** One stderr line for the first fault (by offset), and one for how many more there are. */
export function reportFaults(faults: readonly BlockFault[], shown: string, err: (line: string) => void): void {
  const f = faults[0];
  if (f === undefined) return;
  err(`${shown}: ${describeFault(f)}`);
  if (faults.length > 1) err(`${shown}: ${faults.length - 1} more bad block${faults.length > 2 ? 's' : ''}`);
}

function describeFault(f: BlockFault): string {
  const what = f.kind === 'footer' ? 'footer' : `${f.kind} block${f.name !== undefined && f.kind !== 'properties' ? ` ${f.name}` : ''}`;
  return `bad ${what} at offset ${f.offset} (size ${f.size}): ${f.reason}`;
}

function writeVerify(insp: TableInspection, shown: string, json: boolean, out: LineWriter): void {
  const dataBlocks = insp.blocks.filter((b) => b.kind === 'data').length;
  if (json) {
    for (const f of insp.faults) out.json({ kind: 'fault', block: f.kind, ...(f.name !== undefined ? { name: f.name } : {}), offset: f.offset, size: f.size, reason: f.reason });
    out.json({
      kind: 'verify',
      ok: insp.faults.length === 0,
      file: shown,
      blocks: insp.blocks.length,
      dataBlocks,
      entries: insp.entries,
      faults: insp.faults.length,
    });
  } else if (insp.faults.length === 0) {
    out.line(
      `OK ${shown}: ${insp.blocks.length} blocks (${dataBlocks} data) and ${insp.entries} entries verified` +
        (insp.checkedFilters.length > 0 ? `, filter${insp.checkedFilters.length > 1 ? 's' : ''} checked` : ''),
    );
  }
}

// --- summary ------------------------------------------------------------------------------------

function propertiesJson(p: TableProperties): Record<string, unknown> {
  const { keySketch, murmurKeySketch, ...rest } = p;
  const sketch = keySketch ?? murmurKeySketch;
  return { ...rest, keySketchEstimate: sketch === undefined ? null : Math.round(sketch.count()) };
}

function userKeyOf(internalKey: Uint8Array): Uint8Array {
  return internalKey.subarray(0, Math.max(0, internalKey.length - INTERNAL_KEY_TRAILER_SIZE));
}

/** The lines of a JSON dump before the index: the table, its footer, metaindex, properties, filters. */
export function tableSummaryJson(insp: TableInspection, shown: string): Record<string, unknown>[] {
  return [
    { kind: 'table', file: shown, fileSize: insp.fileSize, dataBlocks: insp.index.length, entries: insp.entries, deletions: insp.deletions },
    ...(insp.footer !== undefined ? [{ kind: 'footer', ...insp.footer }] : []),
    ...insp.metaindex.map((m) => ({ kind: 'metaindex', ...m })),
    ...(insp.properties !== undefined ? [{ kind: 'properties', ...propertiesJson(insp.properties) }] : []),
    ...insp.filters.map((f) => ({ kind: 'filter', ...f })),
  ];
}

/** The compression of the block at each offset ('unread' for one not read), looked up in O(1). */
function blockCompressions(insp: TableInspection): (offset: number) => string {
  const byOffset = new Map(insp.blocks.map((b) => [b.offset, b.compression]));
  return (offset) => {
    const c = byOffset.get(offset);
    return c === undefined ? 'unread' : compressionTypeName(c);
  };
}

/** The footer's kind and RocksDB format_version (docs/format.md "Footer"). */
function footerText(format: FooterFormat, formatVersion: number): string {
  return format === 'rocksdb'
    ? `RocksDB block-based, format_version ${formatVersion}, checksum crc32c`
    : `LevelDB (RocksDB's format_version ${formatVersion})`;
}

function writeSummaryText(insp: TableInspection, shown: string, out: LineWriter): void {
  out.line(`table: ${shown} (${insp.fileSize} bytes)`);
  const f = insp.footer!;
  out.line(`footer: ${footerText(f.format, f.formatVersion)}, ${f.size} bytes`);
  out.line(`  metaindex at ${f.metaindex.offset} (${f.metaindex.size} bytes), index at ${f.index.offset} (${f.index.size} bytes)`);
  out.line(`metaindex: ${insp.metaindex.length} entr${insp.metaindex.length === 1 ? 'y' : 'ies'}`);
  for (const m of insp.metaindex) out.line(`  ${m.name} at ${m.offset} (${m.size} bytes)`);
  if (insp.properties === undefined) {
    out.line('properties: none');
  } else {
    out.line('properties:');
    for (const [name, value] of Object.entries(propertiesJson(insp.properties))) out.line(`  ${name}: ${String(value)}`);
  }
  out.line(`index: ${insp.index.length} data block${insp.index.length === 1 ? '' : 's'}`);
  const compression = blockCompressions(insp);
  insp.index.forEach((e, i) => {
    out.line(`  #${i} at ${e.offset} (${e.size} bytes, ${compression(e.offset)}): index key ${describeSeparator(e.separator)}`);
  });
  if (insp.filters.length === 0) out.line('filter: none');
  for (const s of insp.filters) out.line(`filter: ${describeFilter(s)}`);
}

/**
 * An index key for people: its user key, and its sequence unless it is LevelDB's sentinel
 * (2^56 − 1, which shortened separators carry).
 */
function describeSeparator(key: Uint8Array): string {
  if (key.length < INTERNAL_KEY_TRAILER_SIZE) return describeKey(key);
  const sentinel = getFixed32(key, key.length - 8) === MAX_SEQUENCE_SEEK_TRAILER_LO && getFixed32(key, key.length - 4) === MAX_SEQUENCE_SEEK_TRAILER_HI;
  return sentinel ? showBytes(userKeyOf(key)) : describeKey(key);
}

function fixed(n: number, digits = 2): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(digits);
}

function describeCounts(c: CountSummary | undefined): string {
  return c === undefined ? 'none' : `min ${c.min} avg ${fixed(c.avg, 1)} max ${c.max}`;
}

export function describeFilter(s: FilterSummary): string {
  const parts: string[] = [s.policy];
  parts.push(s.scope === 'block' ? `per block (base ${2 ** (s.baseLg ?? 11)} bytes)` : 'whole table');
  parts.push(`${s.filters} filter${s.filters === 1 ? '' : 's'} (${s.filtersWithKeys} with keys)`);
  parts.push(`${s.keys} keys`);
  parts.push(`keys per filter ${describeCounts(s.keysPerFilter)}`);
  if (s.bitsPerKey !== undefined) parts.push(`${fixed(s.bitsPerKey)} bits/key`);
  if (s.bloomK !== undefined && s.bloomK.length > 0) parts.push(`k=${s.bloomK.join(',')}`);
  if (s.ribbonResultBits !== undefined && s.ribbonResultBits.length > 0) parts.push(`r=${s.ribbonResultBits.join(',')}`);
  if (s.malformed !== undefined) parts.push(`MALFORMED: ${s.malformed}`);
  return parts.join(', ');
}

// --- stats --------------------------------------------------------------------------------------

const KINDS: readonly BlockKind[] = ['data', 'index', 'metaindex', 'filter', 'properties', 'meta'];

export interface TableStatsReport {
  kind: 'stats';
  fileSize: number;
  /** Blocks read without fault, by kind. */
  blocks: Record<BlockKind, number>;
  /** Stored bytes (without trailers) of those blocks, by kind. */
  bytes: Record<BlockKind, number>;
  trailerBytes: number;
  footerBytes: number;
  /** Data blocks: uncompressed bytes, stored bytes, and raw / stored. */
  rawDataBytes: number;
  storedDataBytes: number;
  compressionRatio: number;
  /** Blocks per compression type name. */
  compression: Record<string, number>;
  entries: number;
  deletions: number;
  distinctUserKeys: number;
  keysPerFilter: CountSummary | null;
  bitsPerKey: number | null;
}

export function tableStats(insp: TableInspection): TableStatsReport {
  const blocks = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<BlockKind, number>;
  const bytes = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<BlockKind, number>;
  const compression: Record<string, number> = {};
  let raw = 0;
  let stored = 0;
  for (const b of insp.blocks) {
    blocks[b.kind]++;
    bytes[b.kind] += b.size;
    const name = compressionTypeName(b.compression);
    compression[name] = (compression[name] ?? 0) + 1;
    if (b.kind === 'data') {
      raw += b.rawSize;
      stored += b.size;
    }
  }
  const f = insp.filters[0];
  return {
    kind: 'stats',
    fileSize: insp.fileSize,
    blocks,
    bytes,
    trailerBytes: insp.blocks.length * BLOCK_TRAILER_SIZE,
    footerBytes: insp.footer?.size ?? 0,
    rawDataBytes: raw,
    storedDataBytes: stored,
    compressionRatio: stored === 0 ? 1 : raw / stored,
    compression,
    entries: insp.entries,
    deletions: insp.deletions,
    distinctUserKeys: insp.distinctUserKeys,
    keysPerFilter: f?.keysPerFilter ?? null,
    bitsPerKey: f?.bitsPerKey ?? null,
  };
}

function writeStats(insp: TableInspection, json: boolean, out: LineWriter): void {
  const s = tableStats(insp);
  if (json) {
    out.json(s);
    return;
  }
  const pad = (label: string): string => label.padEnd(18);
  out.line(`${pad('file size')}${s.fileSize} (${formatSize(s.fileSize)})`);
  out.line(`${pad('blocks')}${KINDS.filter((k) => s.blocks[k] > 0).map((k) => `${k} ${s.blocks[k]}`).join(', ')}`);
  for (const k of KINDS) {
    if (s.blocks[k] > 0 || k === 'data') out.line(`${pad(`${k} bytes`)}${s.bytes[k]} (${formatSize(s.bytes[k])})`);
  }
  out.line(`${pad('trailers')}${s.trailerBytes} (${insp.blocks.length} x ${BLOCK_TRAILER_SIZE})`);
  out.line(`${pad('footer')}${s.footerBytes}`);
  out.line(`${pad('data raw/stored')}${s.rawDataBytes} / ${s.storedDataBytes} (ratio ${s.compressionRatio.toFixed(2)})`);
  out.line(`${pad('compression')}${Object.entries(s.compression).map(([n, c]) => `${n} ${c}`).join(', ')}`);
  out.line(`${pad('entries')}${s.entries} (${s.deletions} deletions, ${s.distinctUserKeys} distinct user keys)`);
  for (const f of insp.filters) {
    out.line(`${pad('keys per filter')}${describeCounts(f.keysPerFilter)} (${f.policy}, ${f.scope === 'block' ? 'per block' : 'whole table'})`);
    if (f.bitsPerKey !== undefined) out.line(`${pad('filter bits/key')}${fixed(f.bitsPerKey)}`);
  }
  if (insp.filters.length === 0) out.line(`${pad('keys per filter')}no filter`);
}
