/**
 * Reads a table file block by block for `sievekv dump` (like LevelDB's leveldbutil and RocksDB's
 * sst_dump): the footer, the index and metaindex, every meta block the metaindex names (known or
 * not), and every data block the index names — each one's trailer checksum verified and its
 * contents decompressed and parsed. Unlike `Table` (which reads what a lookup needs and trusts a
 * verified block), the inspector reads everything and checks what the format promises:
 *
 *   - every block: bounds (before the footer), checksum, compression, block structure;
 *   - data blocks: well-formed internal keys in strictly increasing order across the table, each
 *     block's keys ≤ its index separator and > the previous one, blocks not overlapping;
 *   - the filter of a policy this build knows: every key of the table matches it (a filter must
 *     never say "no" to a key it holds);
 *   - the properties block: its entry, deletion, user-key and block counts equal what was found.
 *
 * A fault in a data or meta block is recorded and the walk goes on (blocks are independent); a
 * fault in the footer, index or metaindex stops it (nothing else can be found). Faults carry the
 * block's offset and stored size. I/O errors (the file cannot be opened or read) are thrown.
 *
 * Reading is bounded by the file: a block is read only after its handle was checked to lie
 * before the footer, and decompression is bounded by the codec (compression.ts).
 */
import { SieveError } from '../errors.js';
import { BLOOM_FILTER_POLICY_NAME, BloomFilterPolicy } from '../filter/bloom.js';
import type { FilterPolicy, FilterProbe } from '../filter/policy.js';
import { RIBBON_FILTER_POLICY_NAME, RibbonFilterPolicy } from '../filter/ribbon.js';
import { BLOCKED_BLOOM_FILTER_POLICY_NAME, BlockedBloomFilterPolicy } from '../filter/blocked-bloom.js';
import { bytewiseComparator } from '../format/comparator.js';
import { equalBytes } from '../format/bytes.js';
import {
  checkInternalKey,
  compareInternalKeys,
  INTERNAL_KEY_TRAILER_SIZE,
  readSequenceBigInt,
  ValueType,
} from '../format/internal-key.js';
import { type FileSystem, type RandomAccessFile, readFully } from '../fs/file-system.js';
import { Block } from '../sstable/block.js';
import { BLOCK_TRAILER_SIZE, verifyBlockTrailer } from '../sstable/block-trailer.js';
import { decompressBlock } from '../sstable/compression.js';
import { FilterBlockReader } from '../sstable/filter-block.js';
import {
  BlockHandle,
  Footer,
  type FooterFormat,
  footerFormatOfMagic,
  LEVELDB_FOOTER_SIZE,
  MAX_FOOTER_SIZE,
  MIN_FOOTER_SIZE,
  ROCKSDB_FOOTER_SIZE,
} from '../sstable/footer.js';
import { BLOCK_FILTER_PREFIX, FULL_FILTER_PREFIX, PROPERTIES_BLOCK_NAME } from '../sstable/metaindex.js';
import { decodeTableProperties, type TableProperties } from '../sstable/table-properties.js';
import { bareMessage } from './error-text.js';
import { type FilterSummary, summarizeBlockFilter, summarizeTableFilter } from './filter-summary.js';
import { printableText, showBytes, toHex } from './format-bytes.js';

export type BlockKind = 'data' | 'index' | 'metaindex' | 'filter' | 'properties' | 'meta';

/** A block that was read, verified and decoded. */
export interface BlockInfo {
  kind: BlockKind;
  offset: number;
  /** Stored size (as on disk, compressed if it is), without the 5-byte trailer. */
  size: number;
  /** The trailer's compression type byte. */
  compression: number;
  /** Uncompressed size. */
  rawSize: number;
  /** Meta blocks: the metaindex name. */
  name?: string;
}

/** A damaged block (or footer, or a file too short to hold one). */
export interface BlockFault {
  kind: BlockKind | 'footer';
  offset: number;
  size: number;
  reason: string;
  name?: string;
}

export interface HandleInfo {
  offset: number;
  size: number;
}

export interface IndexEntry extends HandleInfo {
  /** The index key: an internal key ≥ every key of the block and < every key of the next. */
  separator: Uint8Array;
}

export interface MetaindexEntry extends HandleInfo {
  /** The name (printable text, or `0x` + hex for a name that is not). */
  name: string;
}

export interface TableInspection {
  path: string;
  fileSize: number;
  /** `format`: LevelDB's footer (RocksDB's format_version 0) or RocksDB's (format_version 2). */
  footer: { format: FooterFormat; formatVersion: number; size: number; metaindex: HandleInfo; index: HandleInfo } | undefined;
  metaindex: MetaindexEntry[];
  index: IndexEntry[];
  /**
   * Every block read with a good checksum and decompressed, by offset; data, index and
   * metaindex blocks also parsed without fault. (A filter or properties block read well but
   * wrong in meaning is here and in `faults`.)
   */
  blocks: BlockInfo[];
  properties: TableProperties | undefined;
  filters: FilterSummary[];
  /** Metaindex names of the filters checked key by key (their policy is known to this build). */
  checkedFilters: string[];
  /** Counted in the data blocks that read without fault. */
  entries: number;
  deletions: number;
  distinctUserKeys: number;
  /** By offset; empty for a sound table. */
  faults: BlockFault[];
  /** False when a fault in the footer, index or metaindex stopped the walk. */
  complete: boolean;
}

/** One entry of a data block (`userKey` and `value` are owned copies). */
export interface TableEntry {
  userKey: Uint8Array;
  sequence: bigint;
  type: ValueType;
  value: Uint8Array;
}

/** Policies whose filters the inspector can check key by key, by persisted name. */
function knownPolicy(name: string): FilterPolicy | undefined {
  if (name === BLOOM_FILTER_POLICY_NAME) return new BloomFilterPolicy(10); // probes do not depend on bits/key
  if (name === RIBBON_FILTER_POLICY_NAME) return new RibbonFilterPolicy();
  if (name === BLOCKED_BLOOM_FILTER_POLICY_NAME) return new BlockedBloomFilterPolicy();
  return undefined;
}

/** Thrown inside the walk to stop it at a fault in a block nothing can be found without. */
class FatalFault extends Error {}

interface FilterCheck {
  name: string;
  policy: string;
  scope: 'block' | 'table';
  offset: number;
  size: number;
  contents: Uint8Array;
  /** Block scope. */
  reader?: FilterBlockReader;
  keysPerFilter: Map<number, number>;
  probe?: FilterProbe;
  /** The first key the filter did not match (then checking stops). */
  missed?: string;
}

export class TableInspector {
  readonly path: string;
  readonly fileSize: number;
  readonly #file: RandomAccessFile;
  /** The footer's size once decoded (blocks must end before it); the shorter one until then. */
  #footerSize = MIN_FOOTER_SIZE;

  private constructor(path: string, file: RandomAccessFile) {
    this.path = path;
    this.#file = file;
    this.fileSize = file.size;
  }

  /** Opens `path` for reading; throws the file system's IO_ERROR if it cannot. */
  static open(fs: FileSystem, path: string): TableInspector {
    return new TableInspector(path, fs.openReadable(path));
  }

  close(): void {
    this.#file.close();
  }

  /** Walks the whole table (see the file comment). */
  inspect(): TableInspection {
    const out: TableInspection = {
      path: this.path,
      fileSize: this.fileSize,
      footer: undefined,
      metaindex: [],
      index: [],
      blocks: [],
      properties: undefined,
      filters: [],
      checkedFilters: [],
      entries: 0,
      deletions: 0,
      distinctUserKeys: 0,
      faults: [],
      complete: false,
    };
    try {
      this.#walk(out);
      out.complete = true;
    } catch (err) {
      if (!(err instanceof FatalFault)) throw err;
    }
    // A block whose checksum held but whose contents did not is a fault, not a block read.
    const bad = new Set(out.faults.filter((f) => f.kind !== 'properties' && f.kind !== 'filter').map((f) => f.offset));
    out.blocks = out.blocks.filter((b) => !bad.has(b.offset)).sort((a, b) => a.offset - b.offset);
    out.faults.sort((a, b) => a.offset - b.offset);
    return out;
  }

  #walk(out: TableInspection): void {
    const fileSize = this.fileSize;
    if (fileSize < MIN_FOOTER_SIZE) {
      out.faults.push({ kind: 'footer', offset: 0, size: fileSize, reason: `file too short to be a table (${fileSize} bytes)` });
      throw new FatalFault();
    }
    const tailSize = Math.min(fileSize, MAX_FOOTER_SIZE);
    const tail = this.#read(fileSize - tailSize, tailSize);
    let footer: Footer;
    try {
      footer = Footer.decode(tail, this.path, fileSize - tailSize);
    } catch (err) {
      // The fault covers the footer the magic implies (LevelDB's when the magic is no table's).
      const size = Math.min(tailSize, footerFormatOfMagic(tail) === 'rocksdb' ? ROCKSDB_FOOTER_SIZE : LEVELDB_FOOTER_SIZE);
      out.faults.push({ kind: 'footer', offset: fileSize - size, size, reason: reasonOf(err) });
      throw new FatalFault();
    }
    this.#footerSize = footer.encodedLength;
    out.footer = {
      format: footer.format,
      formatVersion: footer.formatVersion,
      size: footer.encodedLength,
      metaindex: plainHandle(footer.metaindexHandle),
      index: plainHandle(footer.indexHandle),
    };

    // Index and metaindex: without them nothing else can be found.
    const index = this.#fatalHandles(out, 'index', footer.indexHandle);
    out.index = index.map((e) => ({ separator: e.key, offset: e.offset, size: e.size }));
    const meta = this.#fatalHandles(out, 'metaindex', footer.metaindexHandle);
    out.metaindex = meta.map((e) => ({ name: nameOf(e.key), offset: e.offset, size: e.size }));

    // Meta blocks: filters, properties, and any others (checksummed like the rest).
    const filters: FilterCheck[] = [];
    for (const m of out.metaindex) {
      const kind: BlockKind = m.name.startsWith(BLOCK_FILTER_PREFIX) || m.name.startsWith(FULL_FILTER_PREFIX)
        ? 'filter'
        : m.name === PROPERTIES_BLOCK_NAME
          ? 'properties'
          : 'meta';
      try {
        const contents = this.#readBlock(out, kind, m, m.name);
        if (kind === 'properties') {
          out.properties = decodeTableProperties(new Block(contents, this.path, m.offset));
        } else if (kind === 'filter') {
          const scope = m.name.startsWith(FULL_FILTER_PREFIX) ? 'table' : 'block';
          const policy = m.name.slice(scope === 'table' ? FULL_FILTER_PREFIX.length : BLOCK_FILTER_PREFIX.length);
          const known = knownPolicy(policy);
          filters.push({
            name: m.name,
            policy,
            scope,
            offset: m.offset,
            size: m.size,
            contents,
            reader: scope === 'block' ? new FilterBlockReader(contents) : undefined,
            keysPerFilter: new Map(),
            probe: known?.newProbe(),
          });
        }
      } catch (err) {
        out.faults.push({ kind, offset: m.offset, size: m.size, reason: reasonOf(err), name: m.name });
      }
    }

    this.#walkDataBlocks(out, filters);

    for (const f of filters) {
      const summary =
        f.scope === 'table'
          ? summarizeTableFilter(f.policy, f.contents, out.distinctUserKeys)
          : summarizeBlockFilter(f.policy, f.contents, (i) => f.keysPerFilter.get(i) ?? 0);
      out.filters.push(summary);
      if (f.probe !== undefined) out.checkedFilters.push(f.name);
      if (f.missed !== undefined) {
        out.faults.push({ kind: 'filter', offset: f.offset, size: f.size, reason: f.missed, name: f.name });
      }
    }
    this.#checkProperties(out);
  }

  /** Data blocks in index order, with the ordering, separator and filter checks. */
  #walkDataBlocks(out: TableInspection, filters: FilterCheck[]): void {
    let prevKey: Uint8Array | undefined; // the last key of the table so far
    let prevUserKey: Uint8Array | undefined;
    let prevSeparator: Uint8Array | undefined;
    let prevEnd = 0;
    for (const entry of out.index) {
      const { offset, size, separator } = entry;
      let entries = 0;
      let deletions = 0;
      let distinct = 0;
      let lastKey = prevKey;
      let lastUserKey = prevUserKey;
      try {
        if (offset < prevEnd) throw fault(`data block overlaps the previous one (which ends at ${prevEnd})`);
        const contents = this.#readBlock(out, 'data', entry);
        const block = new Block(contents, this.path, offset);
        const it = block.newIterator(bytewiseComparator);
        for (it.seekToFirst(); it.valid(); it.next()) {
          const key = it.key();
          checkInternalKey(key, 0, key.length, this.path, offset);
          if (lastKey !== undefined && compareInternalKeys(lastKey, 0, lastKey.length, key, 0, key.length) >= 0) {
            throw fault(`entry ${entries} (${describeKey(key)}) is not after the key before it (${describeKey(lastKey)})`);
          }
          if (entries === 0 && prevSeparator !== undefined && compareInternalKeys(prevSeparator, 0, prevSeparator.length, key, 0, key.length) >= 0) {
            throw fault(`first key ${describeKey(key)} is not after the previous block's index key`);
          }
          const userEnd = key.length - INTERNAL_KEY_TRAILER_SIZE;
          const userKey = key.slice(0, userEnd);
          const isNewUserKey = lastUserKey === undefined || !equalBytes(lastUserKey, userKey);
          if (isNewUserKey) distinct++;
          if (key[userEnd] === ValueType.DELETION) deletions++;
          for (const f of filters) this.#checkFilter(f, offset, userKey, isNewUserKey, key);
          lastKey = key.slice();
          lastUserKey = userKey;
          entries++;
        }
        if (lastKey !== undefined && entries > 0 && compareInternalKeys(lastKey, 0, lastKey.length, separator, 0, separator.length) > 0) {
          throw fault(`last key ${describeKey(lastKey)} is after the block's index key ${describeKey(separator)}`);
        }
      } catch (err) {
        if (!(err instanceof SieveError || err instanceof BlockContentFault)) throw err;
        out.faults.push({ kind: 'data', offset, size, reason: reasonOf(err) });
        prevSeparator = separator;
        prevEnd = Math.max(prevEnd, offset + size + BLOCK_TRAILER_SIZE);
        continue;
      }
      out.entries += entries;
      out.deletions += deletions;
      // `distinct` does not count a user key continuing from the previous block (lastUserKey
      // started as that block's last user key).
      out.distinctUserKeys += distinct;
      prevKey = lastKey;
      prevUserKey = lastUserKey;
      prevSeparator = separator;
      prevEnd = offset + size + BLOCK_TRAILER_SIZE;
    }
  }

  /**
   * Counts `userKey` for the filter covering the block at `blockOffset` and, for a policy this
   * build knows, checks the filter matches it (until the first miss).
   */
  #checkFilter(f: FilterCheck, blockOffset: number, userKey: Uint8Array, newUserKey: boolean, key: Uint8Array): void {
    if (f.scope === 'block') {
      const reader = f.reader!;
      const index = Math.floor(blockOffset / 2 ** reader.baseLg);
      f.keysPerFilter.set(index, (f.keysPerFilter.get(index) ?? 0) + 1);
      if (f.probe === undefined || f.missed !== undefined) return;
      f.probe.setKey(userKey);
      if (!reader.keyMayMatch(blockOffset, f.probe)) {
        f.missed = `filter ${index} (data block at offset ${blockOffset}) does not match key ${describeKey(key)}`;
      }
    } else {
      if (!newUserKey || f.probe === undefined || f.missed !== undefined) return;
      f.probe.setKey(userKey);
      if (!f.probe.mayMatch(f.contents, 0, f.contents.length)) {
        f.missed = `table filter does not match key ${describeKey(key)}`;
      }
    }
  }

  /** A properties block that disagrees with the data blocks is a fault of the properties block. */
  #checkProperties(out: TableInspection): void {
    const props = out.properties;
    if (props === undefined || out.faults.some((f) => f.kind === 'data')) return;
    const found: [string, number, number][] = [
      ['entries', props.numEntries, out.entries],
      ['deletions', props.numDeletions, out.deletions],
      ['distinct user keys', props.numUserKeys, out.distinctUserKeys],
      ['data blocks', props.numDataBlocks, out.index.length],
    ];
    const wrong = found.filter(([, said, is]) => said !== is);
    if (wrong.length === 0) return;
    const m = out.metaindex.find((e) => e.name === PROPERTIES_BLOCK_NAME)!;
    out.faults.push({
      kind: 'properties',
      offset: m.offset,
      size: m.size,
      name: m.name,
      reason: wrong.map(([what, said, is]) => `says ${said} ${what}, the table has ${is}`).join('; '),
    });
  }

  /**
   * Every entry of the table in order, read again from the data blocks (owned copies). Stops
   * with a SieveError CORRUPTION at the first block that does not read.
   */
  *entries(index: readonly IndexEntry[]): Generator<TableEntry> {
    for (const { offset, size } of index) {
      const contents = this.#readBlock(undefined, 'data', { offset, size });
      const block = new Block(contents, this.path, offset);
      const it = block.newIterator(bytewiseComparator);
      for (it.seekToFirst(); it.valid(); it.next()) {
        const keyLen = it.keyLen;
        checkInternalKey(it.keyBuf, 0, keyLen, this.path, offset);
        const userEnd = keyLen - INTERNAL_KEY_TRAILER_SIZE;
        yield {
          userKey: it.keyBuf.slice(0, userEnd),
          sequence: readSequenceBigInt(it.keyBuf, keyLen),
          type: it.keyBuf[userEnd] as ValueType,
          value: it.value().slice(),
        };
      }
    }
  }

  /** The entries of the index or metaindex block at `handle`; a fault there stops the walk. */
  #fatalHandles(out: TableInspection, kind: BlockKind, handle: BlockHandle): KeyedHandle[] {
    try {
      return readHandles(new Block(this.#readBlock(out, kind, handle), this.path, handle.offset), this.path);
    } catch (err) {
      if (!(err instanceof SieveError)) throw err;
      out.faults.push({ kind, offset: handle.offset, size: handle.size, reason: reasonOf(err) });
      throw new FatalFault();
    }
  }

  /**
   * The uncompressed contents of the block at `h`, after the bounds and checksum checks; records
   * it in `out.blocks` (when given). CORRUPTION (a SieveError) on any failure.
   */
  #readBlock(out: TableInspection | undefined, kind: BlockKind, h: HandleInfo, name?: string): Uint8Array {
    const footerOffset = this.fileSize - this.#footerSize;
    if (h.offset + h.size + BLOCK_TRAILER_SIZE > footerOffset) {
      throw new SieveError('CORRUPTION', `${kind} block (offset ${h.offset}, size ${h.size}) runs past the end of the table data (${footerOffset})`, {
        file: this.path,
        offset: h.offset,
      });
    }
    const buf = this.#read(h.offset, h.size + BLOCK_TRAILER_SIZE);
    const type = verifyBlockTrailer(buf, 0, h.size, this.path, h.offset);
    const contents = decompressBlock(type, buf.subarray(0, h.size), this.path, h.offset);
    const info: BlockInfo = { kind, offset: h.offset, size: h.size, compression: type, rawSize: contents.length };
    if (name !== undefined) info.name = name;
    out?.blocks.push(info);
    return contents;
  }

  #read(position: number, length: number): Uint8Array {
    const buf = readFully(this.#file, position, length);
    if (buf.length < length) {
      throw new SieveError('CORRUPTION', `truncated table: read ${buf.length} of ${length} bytes`, {
        file: this.path,
        offset: position + buf.length,
      });
    }
    return buf;
  }
}

/** A problem in a block's contents that the block decoder itself does not check. */
class BlockContentFault extends Error {}

function fault(reason: string): BlockContentFault {
  return new BlockContentFault(reason);
}

function reasonOf(err: unknown): string {
  if (err instanceof BlockContentFault || err instanceof SieveError) return bareMessage(err);
  throw err;
}

function plainHandle(h: BlockHandle): HandleInfo {
  return { offset: h.offset, size: h.size };
}

/** The entries of an index or metaindex block: key → handle (exactly, nothing after it). */
interface KeyedHandle extends HandleInfo {
  key: Uint8Array;
}

function readHandles(block: Block, file: string): KeyedHandle[] {
  const out: KeyedHandle[] = [];
  const it = block.newIterator(bytewiseComparator);
  const handle = new BlockHandle();
  for (it.seekToFirst(); it.valid(); it.next()) {
    const end = handle.decodeFrom(it.data, it.valueStart, it.valueEnd, file, block.offset);
    if (end !== it.valueEnd) {
      throw new SieveError('CORRUPTION', `entry has ${it.valueEnd - end} bytes after its block handle`, { file, offset: block.offset });
    }
    out.push({ key: it.key().slice(), offset: handle.offset, size: handle.size });
  }
  return out;
}

function nameOf(bytes: Uint8Array): string {
  return printableText(bytes) ?? `0x${toHex(bytes)}`;
}

/** An internal key for messages: `"user key" @ sequence : type`. */
export function describeKey(key: Uint8Array): string {
  if (key.length < INTERNAL_KEY_TRAILER_SIZE) return `${showBytes(key)} (not an internal key)`;
  const userEnd = key.length - INTERNAL_KEY_TRAILER_SIZE;
  const type = key[userEnd]!;
  const typeName = type === ValueType.VALUE ? 'value' : type === ValueType.DELETION ? 'deletion' : `type ${type}`;
  return `${showBytes(key.subarray(0, userEnd))} @ ${readSequenceBigInt(key, key.length)} : ${typeName}`;
}
