/**
 * Reads one table file (LevelDB's table/table.cc), made by TableBuilder or by LevelDB.
 *
 * `Table.open` reads the footer, then the index, metaindex, filter and properties blocks once
 * (always checksum-verified) and keeps them; data blocks are read on demand, through the block
 * cache when there is one. All I/O goes through the FileSystem seam.
 *
 * Untrusted bytes: every block handle is checked against the file size (a block and its trailer
 * must end before the footer) before anything is allocated for it; every block read verifies its
 * checksum (data blocks unless `verifyChecksums: false`) before it is decompressed or parsed, a
 * file image's data blocks once, when each joins the image (as a block cache hit is not verified
 * again: the bytes in memory are those that were verified); the block, handle, varint and
 * compression decoders bound every length. Any failure is a SieveError
 * CORRUPTION naming the file and offset — never a crash, a hang, a wrong value, or an allocation
 * larger than the file (decompression is bounded too, and only runs on verified bytes). A table
 * read through a memory map (`mapFile`) is the exception the OS makes: a read error of the disk,
 * or the file shrunk by another program, is a SIGBUS there, where a `pread` gives IO_ERROR.
 *
 * Lookups are synchronous and allocation-free in the steady state (reused scratch iterators and
 * handle, the caller's KeyProbes and result). A Table is used from one thread. `close()` closes
 * the file: calls after it throw CLOSED; iterators still open read a closed file (IO_ERROR) —
 * the table cache closes a table only when no iterator holds it.
 */
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { corruption, ErrorCode, SieveError } from '../errors.js';
import type { KeyProbes } from '../filter/key-probes.js';
import type { FilterPolicy } from '../filter/policy.js';
import { copyBytes } from '../format/bytes.js';
import { getFixed32 } from '../format/coding.js';
import { bytewiseInternalComparator, type InternalKeyComparator } from '../format/internal-key-comparator.js';
import { INTERNAL_KEY_TRAILER_SIZE, ValueType } from '../format/internal-key.js';
import type { FileSystem, RandomAccessFile } from '../fs/file-system.js';
import { Block, BlockIterator, takeBlockBytes } from './block.js';
import type { BlockCache } from './block-cache.js';
import { BLOCK_TRAILER_SIZE, verifyBlockTrailer } from './block-trailer.js';
import { decompressBlockInScratch, decompressForLookup, lookupLength } from './compression.js';
import { FilterBlockReader } from './filter-block.js';
import { BlockHandle, Footer, MAX_FOOTER_SIZE, MIN_FOOTER_SIZE } from './footer.js';
import { fullFilterMayMatch } from './full-filter-block.js';
import { indexHandleInto } from './index-handles.js';
import { lookupFound, SEEK_DECLINED, SEEK_FOUND, seekLookupBlock } from './lookup-seek.js';
import type { Readahead } from './readahead.js';
import type { ResidentFiles, ResidentHolder } from './resident-files.js';
import { usesBytewiseInternalKeys } from './restart-windows.js';
import {
  BLOCK_FILTER_PREFIX,
  decodeMetaindex,
  FULL_FILTER_PREFIX,
  type FilterScope,
  PROPERTIES_BLOCK_NAME,
} from './metaindex.js';
import { decodeTableProperties, type TableProperties } from './table-properties.js';
import { recyclable, TableIterator, type TableIteratorOptions } from './table-iterator.js';
import { TableStats } from './table-stats.js';

/** Outcome of `Table.get` for one user key. */
export const GetStatus = {
  /** The table has no entry for the key visible at the lookup's sequence. */
  NOT_FOUND: 0,
  /** The newest visible entry is a value: `result.value`. */
  FOUND: 1,
  /** The newest visible entry is a deletion marker: the key is absent, look no further. */
  DELETED: 2,
} as const;
export type GetStatus = (typeof GetStatus)[keyof typeof GetStatus];

const EMPTY = new Uint8Array(0);
/** Spare bytes before a block in the scratch buffer: room for LZ4's 4-byte length prefix. */
const SCRATCH_SPARE = 4;
const TWO_POW_24 = 16777216;

/**
 * The caller-owned result of `Table.get`, reused across lookups. For FOUND, the value is
 * `data[valueStart, valueEnd)`: a view into a block, whose bytes are never overwritten (blocks are
 * immutable), so it stays correct; but it keeps the whole block alive — copy the value before
 * keeping it for long. `value` makes the view.
 */
export class TableGetResult {
  status: GetStatus = GetStatus.NOT_FOUND;
  data: Uint8Array = EMPTY;
  valueStart = 0;
  valueEnd = 0;
  /** Sequence number of the entry found (FOUND or DELETED). */
  sequence = 0;

  get value(): Uint8Array {
    return this.data.subarray(this.valueStart, this.valueEnd);
  }
}

export interface TableOptions {
  /**
   * The table's size (from the MANIFEST); default: the size the file system reports. A file
   * shorter than this is CORRUPTION; bytes past it are ignored.
   */
  fileSize?: number;
  /**
   * This file's id in the block cache: stable across reopenings of the file (the table cache
   * keeps one per file number). Default: a fresh `blockCache.newId()`, whose blocks `close()`
   * erases.
   */
  cacheId?: number;
  /** Policies a filter may have been written by; matched by name. Unknown → no filter. */
  filterPolicies?: readonly FilterPolicy[];
  /** Cache for data blocks; none → every data block read goes to the file. */
  blockCache?: BlockCache;
  /** Verify data block checksums (meta blocks are always verified). @defaultValue true */
  verifyChecksums?: boolean;
  /** An aggregate sink every counter is also added to. */
  stats?: TableStats;
  /** @defaultValue the bytewise internal-key comparator */
  comparator?: InternalKeyComparator;
  /**
   * The budget of table file images kept in memory: once RESIDENT_AFTER_READS data blocks were
   * read from this file, the table takes an image of the file's size, if the budget admits it;
   * each data block a lookup or a seek reads joins it once read from the file and verified, and is
   * decoded from memory after that (the way LevelDB's mmap-ed tables are paged in). None → every
   * block read goes to the file.
   */
  residentFiles?: ResidentFiles;
  /**
   * Map the file into memory where the file system can (RandomAccessFile.map): every read of the
   * table is then a copy out of the mapping, with no system call, and `residentFiles` goes
   * unused (the page cache holds the file). @defaultValue false
   */
  mapFile?: boolean;
}

/** Bytes before a block and of its header that an LZ4 decode in place may overwrite: the spare plus a varint32's 5. */
const SAVED_BYTES = SCRATCH_SPARE + 5;

/** Bytes before the file's first byte in a table's image: the room a decode in place needs before a block. */
const IMAGE_SPARE = SCRATCH_SPARE;

/**
 * Every block read of this thread's tables lands here first (a read is done with it before the
 * next begins: its result never aliases it). One per thread rather than one per table: a table
 * kept one as large as the largest block it had read (its index or filter, at open: ~56 KiB for
 * a 2 MiB table), 56 MB across a table cache of 1,000. Reads larger than READ_SCRATCH_KEPT get a
 * buffer of their own.
 */
let readScratchBuffer = Buffer.allocUnsafe(SCRATCH_SPARE + 4096 + BLOCK_TRAILER_SIZE);
/** The largest scratch kept: a database of blocks larger than this (values over 256 KiB) allocates per read. */
const READ_SCRATCH_KEPT = 256 * 1024;

function readScratch(bytes: number): Buffer {
  if (bytes <= readScratchBuffer.length) return readScratchBuffer;
  if (bytes > READ_SCRATCH_KEPT) return Buffer.allocUnsafe(bytes);
  return (readScratchBuffer = Buffer.allocUnsafe(Math.min(READ_SCRATCH_KEPT, Math.max(bytes, 2 * readScratchBuffer.length))));
}

/** Data blocks read from a file before the table asks to keep an image of it in memory. */
export const RESIDENT_AFTER_READS = 4;

/** One data block read in this many is timed for TableStats' read times (a power of two). */
export const TIME_SAMPLE = 8;
/** Data block reads so far, by every table of this thread: picks the timed ones. */
let timeSampleCounter = 0;

export class Table implements ResidentHolder {
  readonly path: string;
  readonly fileSize: number;
  readonly comparator: InternalKeyComparator;
  /** The comparator orders bytewise user keys (a lookup's block may then be sought in WebAssembly). */
  private readonly bytewise: boolean;
  /** This table's own counters (`options.stats` gets the same increments). */
  readonly stats = new TableStats();
  /** Decoded properties block; undefined for tables without one (LevelDB's). */
  readonly properties: TableProperties | undefined;
  /** Name of the policy that wrote the table's filter (known or not); undefined: no filter. */
  readonly filterPolicyName: string | undefined;
  readonly filterScope: FilterScope | undefined;
  /** The policy used to read the filter; undefined when there is none or its name is unknown. */
  readonly filterPolicy: FilterPolicy | undefined;
  readonly cacheId: number;

  private readonly file: RandomAccessFile;
  private readonly sink: TableStats;
  private readonly blockCache: BlockCache | undefined;
  private readonly ownsCacheId: boolean;
  private readonly verifyChecksums: boolean;
  /** File offset of the footer: every block and trailer must end at or before it. */
  private readonly footerOffset: number;
  /** Where the data blocks end (the first meta block), for approximateOffsetOf. */
  private readonly dataEnd: number;
  /** @internal the index block, for iterators. */
  readonly indexBlock: Block;
  private readonly blockFilter: FilterBlockReader | undefined;
  private readonly fullFilter: Uint8Array | undefined;
  private readonly indexIter: BlockIterator;
  private readonly dataIter: BlockIterator;
  private readonly handle = new BlockHandle();
  private closed = false;
  /** A closed recycled iterator (TableIteratorOptions.recycle), handed out by the next newIterator that asks for one. */
  private spareIterator: TableIterator | null = null;
  private readonly residentFiles: ResidentFiles | undefined;
  /**
   * The file's image, once admitted to `residentFiles`: the file's byte at offset o is at
   * o + IMAGE_SPARE (room before the first block for the LZ4 decoder's prefix, decodeInImage).
   * Only the data blocks in `present` were written; bytes elsewhere are whatever the allocator
   * gave, and only the spare bytes before a block are ever read (and put back) outside it.
   * Relies on table files never changing once written: a block copied in is the file's bytes.
   */
  private image: Buffer | undefined = undefined;
  /**
   * The data blocks the image holds, offset → size, each verified (unless `verifyChecksums` is
   * off) before it was copied in: reads of them from memory skip the check, as a block cache's
   * hits do. A block whose read or check failed is not in it and goes to the file again; a handle
   * at a known offset with another size (a damaged or crafted index) is read from the file.
   */
  private readonly present = new Map<number, number>();
  /** Data blocks read from the file until the image is taken; after, reads from the image (for the budget's LRU touch). */
  private blockReads = 0;
  /**
   * Reads from the file before the next image: RESIDENT_AFTER_READS, 8 times more after each
   * eviction, so files that do not fit together do not take turns being held.
   */
  private residentAfter = RESIDENT_AFTER_READS;
  /** The file mapped into memory (TableOptions.mapFile), until close; undefined: read with readAt. */
  private mapped: Uint8Array | undefined;
  /** The image's bytes a decode in place overwrites (decodeInImage), kept to put back. */
  private readonly savedBytes = new Uint8Array(SAVED_BYTES);

  private constructor(path: string, file: RandomAccessFile, fileSize: number, options: TableOptions) {
    this.path = path;
    this.file = file;
    this.fileSize = fileSize;
    this.comparator = options.comparator ?? bytewiseInternalComparator;
    this.bytewise = usesBytewiseInternalKeys(this.comparator);
    this.sink = options.stats ?? new TableStats();
    this.blockCache = options.blockCache;
    this.verifyChecksums = options.verifyChecksums ?? true;
    this.ownsCacheId = options.cacheId === undefined;
    this.cacheId = options.cacheId ?? this.blockCache?.newId() ?? 0;
    this.residentFiles = options.residentFiles;
    this.mapped = options.mapFile === true ? file.map?.() : undefined;

    if (fileSize < MIN_FOOTER_SIZE) {
      throw corruption(`file too short to be an sstable (${fileSize} bytes)`, { file: path, offset: 0 });
    }
    const tailSize = Math.min(fileSize, MAX_FOOTER_SIZE);
    const footer = Footer.decode(this.readExactly(fileSize - tailSize, tailSize), path, fileSize - tailSize);
    this.footerOffset = fileSize - footer.encodedLength;

    this.indexBlock = this.readBlockFromFile(footer.indexHandle, true, 'index');
    const meta = decodeMetaindex(this.readBlockFromFile(footer.metaindexHandle, true, 'metaindex'));
    let dataEnd = footer.metaindexHandle.offset;
    for (const h of meta.values()) if (h.offset < dataEnd) dataEnd = h.offset;
    this.dataEnd = dataEnd;

    // The filter: a full-table filter of a known policy, else a per-block one of a known policy.
    let found: { name: string; scope: FilterScope; handle: BlockHandle; policy?: FilterPolicy } | undefined;
    for (const [name, handle] of meta) {
      const scope: FilterScope | undefined = name.startsWith(FULL_FILTER_PREFIX)
        ? 'table'
        : name.startsWith(BLOCK_FILTER_PREFIX)
          ? 'block'
          : undefined;
      if (scope === undefined) continue;
      const policyName = name.slice(scope === 'table' ? FULL_FILTER_PREFIX.length : BLOCK_FILTER_PREFIX.length);
      const policy = options.filterPolicies?.find((p) => p.name === policyName);
      const better = found === undefined || (policy !== undefined && (found.policy === undefined || scope === 'table'));
      if (better) found = { name: policyName, scope, handle, policy };
    }
    this.filterPolicyName = found?.name;
    this.filterScope = found?.scope;
    this.filterPolicy = found?.policy;
    if (found?.policy !== undefined) {
      const contents = this.readBlockContents(found.handle, true, 'filter');
      if (found.scope === 'table') this.fullFilter = contents;
      else this.blockFilter = new FilterBlockReader(contents);
    }

    const propsHandle = meta.get(PROPERTIES_BLOCK_NAME);
    this.properties =
      propsHandle === undefined ? undefined : decodeTableProperties(this.readBlockFromFile(propsHandle, true, 'properties'));

    this.indexIter = this.indexBlock.newIterator(this.comparator);
    this.dataIter = new BlockIterator(this.comparator, this.indexBlock);
  }

  /**
   * Opens the table at `path`. Throws IO_ERROR if the file cannot be opened or read, CORRUPTION
   * if its footer, index, metaindex, filter or properties block is damaged (the file is closed
   * again in both cases).
   */
  static open(fs: FileSystem, path: string, options: TableOptions = {}): Table {
    const file = fs.openReadable(path);
    try {
      // The MANIFEST's size is the table's; a file shorter than that lost its tail.
      const size = options.fileSize ?? file.size;
      if (size > file.size) {
        throw corruption(`truncated table: the file has ${file.size} bytes, expected ${size}`, {
          file: path,
          offset: file.size,
        });
      }
      return new Table(path, file, size, options);
    } catch (err) {
      file.close();
      throw err;
    }
  }

  /**
   * Looks up `userKey` as of the sequence in `lookupKey` (= userKey ‖ fixed64(seq << 8 |
   * VALUE_TYPE_FOR_SEEK)): finds the first entry ≥ lookupKey and reports FOUND (its value in
   * `result`), DELETED or NOT_FOUND according to whether its user key is `userKey`. `probes` must
   * have been `reset(userKey)` for this lookup: the filter asks it for the policy's probe, so the
   * key is hashed once across all the tables of one lookup. Returns `result.status`.
   *
   * The full-table filter is asked before the index; the per-block filter about the one block the
   * index points to, which is read only if the filter says it may hold the key.
   */
  get(lookupKey: Uint8Array, userKey: Uint8Array, probes: KeyProbes, result: TableGetResult): GetStatus {
    if (this.closed) throw closedError(this.path);
    result.status = GetStatus.NOT_FOUND;
    result.data = EMPTY;
    result.valueStart = result.valueEnd = 0;
    const stats = this.stats;
    const sink = this.sink;
    let filterSaidMaybe = false;
    if (this.fullFilter !== undefined) {
      stats.filterChecks++;
      sink.filterChecks++;
      if (!this.fullFilterMayMatch(probes)) {
        stats.filterNegatives++;
        sink.filterNegatives++;
        return GetStatus.NOT_FOUND;
      }
      filterSaidMaybe = true;
    }
    if (this.seekIndex(lookupKey)) {
      const handle = this.handle;
      if (this.blockFilter !== undefined) {
        stats.filterChecks++;
        sink.filterChecks++;
        if (!this.blockFilterMayMatch(handle.offset, probes)) {
          stats.filterNegatives++;
          sink.filterNegatives++;
          return GetStatus.NOT_FOUND;
        }
        filterSaidMaybe = true;
      }
      const block = this.readBlock(handle, true, true);
      // A block the LZ4 decoder left in its module's memory is sought there (block-seek-wasm.ts),
      // unless that seek declines it; any other block, by the block iterator.
      const sought = this.bytewise ? seekLookupBlock(block.data, block.size, lookupKey) : SEEK_DECLINED;
      if (sought === SEEK_FOUND) {
        const found = lookupFound;
        if (found.userKeyEqual) {
          const trailerStart = found.keyStart + found.keyLength - INTERNAL_KEY_TRAILER_SIZE;
          this.takeFound(found.bytes, trailerStart, block.data, found.valueStart, found.valueEnd, handle.offset, result);
        }
      } else if (sought === SEEK_DECLINED) {
        const it = this.dataIter;
        it.setBlock(block);
        it.seek(lookupKey);
        if (it.valid()) {
          const keyLen = it.keyLen;
          const keyBuf = it.keyBuf;
          if (keyLen < INTERNAL_KEY_TRAILER_SIZE) this.badEntry(handle.offset, `an internal key of ${keyLen} bytes`);
          const userEnd = keyLen - INTERNAL_KEY_TRAILER_SIZE;
          if (this.comparator.user.compare(keyBuf, 0, userEnd, userKey, 0, userKey.length) === 0) {
            this.takeFound(keyBuf, userEnd, it.data, it.valueStart, it.valueEnd, handle.offset, result);
          }
        }
      }
    }
    if (result.status === GetStatus.NOT_FOUND && filterSaidMaybe) {
      stats.filterFalsePositives++;
      sink.filterFalsePositives++;
    }
    return result.status;
  }

  /**
   * Sets `this.handle` to the data block that holds the first key at or after `lookupKey`; false
   * if none does. The index block's windows and handles answer where they can
   * (BlockIterator.findIndexEntry), else its iterator seeks and the entry's handle is decoded.
   */
  private seekIndex(lookupKey: Uint8Array): boolean {
    const index = this.indexIter;
    const entry = this.bytewise ? index.findIndexEntry(lookupKey) : -1;
    if (entry >= 0) {
      const indexBlock = this.indexBlock;
      if (entry === indexBlock.numRestarts) return false;
      indexHandleInto(indexBlock.indexHandles!, entry, this.handle);
      return true;
    }
    index.seek(lookupKey);
    if (!index.valid()) return false;
    this.handle.decodeFrom(index.data, index.valueStart, index.valueEnd, this.path, this.indexBlock.offset);
    return true;
  }

  /**
   * Sets `result` from the entry a lookup found for its user key: its trailer at
   * `key[trailerStart, trailerStart + 8)`, its value `data[valueStart, valueEnd)`.
   */
  private takeFound(key: Uint8Array, trailerStart: number, data: Uint8Array, valueStart: number, valueEnd: number, blockOffset: number, result: TableGetResult): void {
    const type = key[trailerStart]!;
    result.sequence = getFixed32(key, trailerStart + 4) * TWO_POW_24 + (getFixed32(key, trailerStart) >>> 8);
    if (type === ValueType.VALUE) {
      result.status = GetStatus.FOUND;
      result.data = data;
      result.valueStart = valueStart;
      result.valueEnd = valueEnd;
    } else if (type === ValueType.DELETION) {
      result.status = GetStatus.DELETED;
    } else {
      this.badEntry(blockOffset, `value type ${type}`);
    }
  }

  /**
   * @internal The whole-table filter's bytes (read with `filterPolicy`), or undefined: for a caller
   * that asks several tables' filters at once (db/level0-filters.ts). Borrowed: never to be
   * written; they stay valid after the table is closed (nothing recycles them).
   */
  get wholeTableFilter(): Uint8Array | undefined {
    return this.fullFilter;
  }

  /**
   * @internal Counts a lookup that the whole-table filter ruled out when the caller asked it
   * itself (see wholeTableFilter), as `get` counts its own filter's answers.
   */
  countFilterNegative(): void {
    const stats = this.stats;
    const sink = this.sink;
    stats.filterChecks++;
    sink.filterChecks++;
    stats.filterNegatives++;
    sink.filterNegatives++;
  }

  /** False only if the full-table filter excludes the key `probes` was reset to (true without one). */
  fullFilterMayMatch(probes: KeyProbes): boolean {
    return this.fullFilter === undefined || fullFilterMayMatch(this.fullFilter, probes.probeFor(this.filterPolicy!));
  }

  /**
   * False only if the per-block filter covering the data block at `blockOffset` excludes the key
   * `probes` was reset to (true without one).
   */
  blockFilterMayMatch(blockOffset: number, probes: KeyProbes): boolean {
    return this.blockFilter === undefined || this.blockFilter.keyMayMatch(blockOffset, probes.probeFor(this.filterPolicy!));
  }

  /** A two-level iterator over every entry (see table-iterator.ts). Close it when done. */
  newIterator(options: TableIteratorOptions = {}): TableIterator {
    if (this.closed) throw closedError(this.path);
    const spare = this.spareIterator;
    if (spare !== null && options.recycle === true && recyclable(options)) {
      this.spareIterator = null;
      spare.reopen(this);
      return spare;
    }
    return new TableIterator(this, options);
  }

  /** @internal TableIterator.close of a recycled iterator: kept for the next newIterator (one per table, none once closed). */
  keepSpareIterator(it: TableIterator): void {
    if (!this.closed && this.spareIterator === null) this.spareIterator = it;
  }

  /**
   * The approximate file offset where entries ≥ `internalKey` begin: the offset of the data block
   * the index points to, or the end of the data blocks for a key past the last one.
   */
  approximateOffsetOf(internalKey: Uint8Array): number {
    if (this.closed) throw closedError(this.path);
    const index = this.indexIter;
    index.seek(internalKey);
    if (!index.valid()) return this.dataEnd;
    this.handle.decodeFrom(index.data, index.valueStart, index.valueEnd, this.path, this.indexBlock.offset);
    return this.handle.offset;
  }

  /** Closes the file; a table with its own cache id also drops its cached blocks. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.spareIterator = null;
    if (this.ownsCacheId) this.blockCache?.eraseTable(this.cacheId);
    this.residentFiles?.release(this);
    this.dropImage();
    this.mapped = undefined; // the close unmaps it
    this.file.close();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * @internal The data block at `handle`: from the block cache if there, else read (and cached
   * when `fillCache` and the cache admits it: BlockCache.admit). Counts cache hits/misses, declined
   * admissions and file reads. `forLookup`: the caller is `get`, which does not pin the block, and
   * a block the cache declines is decoded into the lookup scratch; an iterator pins what it is
   * given at once, so a block read for it and not cached has its bytes recycled when the iterator
   * lets go (Block.markUncached).
   */
  readBlock(handle: BlockHandle, fillCache: boolean, forLookup = false, ahead?: Readahead): Block {
    const cache = this.blockCache;
    if (cache !== undefined) {
      const cached = cache.lookup(this.cacheId, handle.offset);
      if (cached !== undefined) {
        this.stats.blockCacheHits++;
        this.sink.blockCacheHits++;
        ahead?.follow(handle.offset, handle.size + BLOCK_TRAILER_SIZE); // a scan's sequence goes on
        return cached;
      }
      this.stats.blockCacheMisses++;
      this.sink.blockCacheMisses++;
      if (fillCache && !cache.admit(this.cacheId, handle.offset)) {
        this.stats.blockCacheDeclined++;
        this.sink.blockCacheDeclined++;
        if (forLookup) return this.readLookupScratch(handle);
        fillCache = false; // the iterator's block goes back to the pool when it lets go
      }
    }
    const block = Block.fromTaken(this.readBlockContents(handle, this.verifyChecksums, 'data', takeBlockBytes, false, ahead), this.path, handle.offset);
    this.stats.blocksRead++;
    this.sink.blocksRead++;
    const cached = cache !== undefined && fillCache && cache.insert(this.cacheId, handle.offset, block);
    // A lookup's uncached block is left to the garbage collector: the caller reads its value
    // after this returns, and nothing would tell when it is done.
    if (!cached && !forLookup) block.markUncached();
    return block;
  }

  /**
   * The data block at `handle` as this thread's lookup scratch block (over the bytes
   * decompressForLookup leaves it in): valid until the next block read. For a lookup's block the
   * cache did not take: no bytes taken from the pool, nothing evicted.
   */
  private readLookupScratch(handle: BlockHandle): Block {
    const contents = this.readBlockContents(handle, this.verifyChecksums, 'data', undefined, true);
    this.stats.blocksRead++;
    this.sink.blocksRead++;
    return (lookupScratch = Block.reuse(lookupScratch, contents, lookupLength, this.path, handle.offset));
  }

  /** Reads, verifies (if `verify`), decompresses and validates the block at `handle`. */
  private readBlockFromFile(handle: BlockHandle, verify: boolean, what: string): Block {
    return new Block(this.readBlockContents(handle, verify, what), this.path, handle.offset);
  }

  /**
   * The uncompressed contents of the block at `handle`, verified if `verify`, in bytes from
   * `take` (see decompressBlockInScratch), or, for a point lookup's block (`lookup`), in the
   * bytes decompressForLookup leaves it in: `[0, lookupLength)` of them, until the next decode.
   */
  private readBlockContents(
    handle: BlockHandle,
    verify: boolean,
    what: string,
    take?: (length: number) => Uint8Array,
    lookup = false,
    ahead?: Readahead,
  ): Uint8Array {
    const end = handle.offset + handle.size + BLOCK_TRAILER_SIZE;
    if (end > this.footerOffset) {
      throw corruption(
        `${what} block handle (offset ${handle.offset}, size ${handle.size}) runs past the end of the table data (${this.footerOffset})`,
        { file: this.path, offset: handle.offset },
      );
    }
    // Data blocks' reading and decompressing are timed apart, for sievekv.stats: one read in
    // TIME_SAMPLE, counted TIME_SAMPLE times (a clock reading costs 65-90 ns, 2-3% of a block
    // read if every one were timed).
    const timed = what === 'data' && (++timeSampleCounter & (TIME_SAMPLE - 1)) === 0;
    const started = timed ? performance.now() : 0;
    const offset = handle.offset;
    const length = handle.size + BLOCK_TRAILER_SIZE;
    let image = this.image;
    if (image !== undefined && this.present.get(offset) === handle.size) {
      ahead?.follow(offset, length); // a scan's sequence goes on
      const contents = this.decodeInImage(image, handle, take, lookup);
      if ((++this.blockReads & 63) === 0) this.residentFiles!.touch(this);
      this.stats.blocksReadFromMemory++;
      this.sink.blocksReadFromMemory++;
      if (timed) this.addBlockTimes(0, performance.now() - started);
      return contents;
    }
    // Read into the thread's read scratch, 4 bytes in: no buffer per read, and room for the LZ4
    // decoder's length prefix in place (decompressBlockInScratch). The result never aliases it.
    const buf = readScratch(SCRATCH_SPARE + length);
    if (ahead === undefined) this.readInto(buf, SCRATCH_SPARE, offset, length);
    else this.readAhead(ahead, buf, offset, length);
    const read = timed ? performance.now() : 0;
    const type = verify ? verifyBlockTrailer(buf, SCRATCH_SPARE, handle.size, this.path, offset) : buf[SCRATCH_SPARE + handle.size]!;
    if (what === 'data') {
      if (image === undefined && ++this.blockReads === this.residentAfter && this.mapped === undefined) image = this.takeImage();
      // A data block that read (and verified) whole joins the image, before the decoder may
      // write over the scratch; a read or check that failed threw above and left the image as it
      // was. A scan's blocks (read in sequence, through windows) stay out: a scan reads each once,
      // and copying them cost full scans 13-22% in bench/db (BENCHMARKS.md, session 16).
      if (image !== undefined && (ahead === undefined || !ahead.inSequence)) {
        buf.copy(image, IMAGE_SPARE + offset, SCRATCH_SPARE, SCRATCH_SPARE + length);
        this.present.set(offset, handle.size);
      }
    }
    const contents = this.decode(type, buf, SCRATCH_SPARE, handle.size, offset, take, lookup);
    if (timed) this.addBlockTimes(read - started, performance.now() - read);
    return contents;
  }

  /**
   * The contents of the verified block `bytes[start, start + size)` at file `offset`: for a point
   * lookup (`lookup`) where decompressForLookup leaves them, else in bytes from `take`
   * (decompressBlockInScratch).
   */
  private decode(type: number, bytes: Buffer, start: number, size: number, offset: number, take: ((length: number) => Uint8Array) | undefined, lookup: boolean): Uint8Array {
    return lookup
      ? decompressForLookup(type, bytes, start, size, this.path, offset)
      : decompressBlockInScratch(type, bytes, start, size, this.path, offset, undefined, take);
  }

  /** Adds a sampled data block's read and decompression times (ms) to the counters, in µs. */
  private addBlockTimes(readMs: number, decompressMs: number): void {
    const read = readMs * 1000 * TIME_SAMPLE;
    const decompress = decompressMs * 1000 * TIME_SAMPLE;
    this.stats.blockReadMicros += read;
    this.sink.blockReadMicros += read;
    this.stats.blockDecompressMicros += decompress;
    this.sink.blockDecompressMicros += decompress;
  }

  /**
   * The block at `handle`, which the image holds, decoded where it lies: no copy, no check (it
   * was checked when it came in). The decoder may overwrite the SCRATCH_SPARE bytes before the
   * block and its header (LZ4's length prefix goes there, decompressBlockInScratch): they are
   * another block's or unwritten, so they are put back after.
   */
  private decodeInImage(image: Buffer, handle: BlockHandle, take: ((length: number) => Uint8Array) | undefined, lookup: boolean): Uint8Array {
    const start = IMAGE_SPARE + handle.offset;
    const type = image[start + handle.size]!;
    const saved = this.savedBytes;
    const from = start - SCRATCH_SPARE;
    for (let i = 0; i < SAVED_BYTES; i++) saved[i] = image[from + i]!;
    try {
      return this.decode(type, image, start, handle.size, handle.offset, take, lookup);
    } finally {
      for (let i = 0; i < SAVED_BYTES; i++) image[from + i] = saved[i]!;
    }
  }

  /**
   * Takes an image of the file if the budget admits one, and returns it: its bytes are not read
   * now (nor touched: `allocUnsafeSlow` leaves them as the allocator gives them); each data block
   * joins it when it is first read and verified (readBlockContents).
   */
  private takeImage(): Buffer | undefined {
    const budget = this.residentFiles;
    if (budget === undefined || this.closed || !budget.admit(this, this.fileSize)) return undefined;
    this.blockReads = 0;
    return (this.image = Buffer.allocUnsafeSlow(IMAGE_SPARE + this.fileSize));
  }

  /** @internal The budget let go of this file: its blocks are read from the file again. */
  evictResident(): void {
    this.dropImage();
    this.blockReads = 0;
    this.residentAfter = Math.min(this.residentAfter * 8, 1 << 24);
  }

  private dropImage(): void {
    this.image = undefined;
    this.present.clear();
  }

  /** True while the table holds an image of its file (see TableOptions.residentFiles). */
  get isResident(): boolean {
    return this.image !== undefined;
  }

  /**
   * An iterator's block read: the block's `length` bytes at file `offset` into `buf` at
   * SCRATCH_SPARE, from the iterator's readahead window if it holds them, else from the file —
   * with a window around them once the iterator reads blocks in sequence (readahead.ts).
   */
  private readAhead(ahead: Readahead, buf: Buffer, offset: number, length: number): void {
    ahead.follow(offset, length);
    if (!ahead.holds(offset, length)) {
      const size = ahead.plan(offset, length, this.footerOffset);
      if (size === 0) return this.readInto(buf, SCRATCH_SPARE, offset, length);
      try {
        this.readInto(ahead.bytes, 0, ahead.start, size, true);
      } catch {
        // Whatever failed in the window, the block alone may read: it throws if it cannot.
        ahead.reset();
        return this.readInto(buf, SCRATCH_SPARE, offset, length);
      }
      ahead.filled(size);
    }
    ahead.bytes.copy(buf, SCRATCH_SPARE, offset - ahead.start, offset - ahead.start + length);
  }

  /**
   * Reads `length` bytes at file `position` into `buf[at, at + length)` (inside the file size):
   * copied out of the mapping if the table has one, unless `fromFile` (a scan's window, read
   * with one `pread` ahead of its blocks, so that a scan neither faults a page at a time on a
   * cold cache nor leaves the pages it passed over in the process's RSS).
   */
  private readInto(buf: Uint8Array, at: number, position: number, length: number, fromFile = false): void {
    const mapped = this.mapped;
    if (mapped !== undefined && !fromFile) {
      // The table's size is at most the mapped file's (Table.open); checked again all the same.
      if (position + length > mapped.length) {
        throw corruption(`truncated table: ${length} bytes at ${position} run past the mapped ${mapped.length}`, { file: this.path, offset: position });
      }
      copyBytes(mapped, position, position + length, buf, at);
      return;
    }
    let done = 0;
    while (done < length) {
      const n = this.file.readAt(buf, at + done, length - done, position + done);
      if (n <= 0) {
        throw corruption(`truncated table: read ${done} of ${length} bytes at ${position}`, {
          file: this.path,
          offset: position + done,
        });
      }
      done += n;
    }
  }

  /** `length` bytes at `position` (the caller checked they lie inside the file size). */
  private readExactly(position: number, length: number): Uint8Array {
    const buf = new Uint8Array(length);
    this.readInto(buf, 0, position, length);
    return buf;
  }

  private badEntry(blockOffset: number, what: string): never {
    throw corruption(`bad data block entry: ${what}`, { file: this.path, offset: blockOffset });
  }
}

/**
 * Point lookups' scratch block (one per thread: lookups run on the database's thread), for the
 * blocks the block cache does not admit, over the bytes `decompressForLookup` leaves them in:
 * `Table.get` reads its entry before the next block read, and its caller copies the value out.
 */
let lookupScratch: Block | null = null;

function closedError(path: string): SieveError {
  return new SieveError(ErrorCode.CLOSED, 'table is closed', { file: path });
}
