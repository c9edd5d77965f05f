/**
 * Writes one table file in LevelDB's table format (table/table_builder.cc; layout in
 * DESIGN.md "On-disk formats" and docs/format):
 *
 *   data block 0 … data block n−1   filter block?   properties block   metaindex   index   footer
 *
 * each block followed by its 5-byte trailer (type ‖ masked crc32c). With compression `none` or
 * `snappy` and the per-block filter scope the file is one LevelDB reads as its own (the
 * properties block and the metaindex name `sievekv.properties` are extra, and LevelDB ignores
 * names it does not know).
 *
 * Legal call order: `add`* (internal keys strictly increasing in the comparator's order) →
 * `finish()` once, or `abandon()` at any point to give up. After `finish` or `abandon` nothing
 * else may be called but the getters. The builder neither syncs nor closes the file: the caller
 * does both after `finish` (or removes the file after `abandon`). If a write to the file throws,
 * the builder is failed: every later call rethrows that error.
 *
 * Index entries: when a data block is cut, its index entry is written only when the next key
 * arrives, so its key can be `findShortestSeparator(last key of the block, next key)` (LevelDB's
 * pending-index-entry trick: short index keys, more of them per index block); after the last
 * block, `findShortSuccessor(last key)`.
 *
 * Filters are built over user keys (internal key minus its 8-byte trailer): the per-block scope
 * (default) feeds every key to FilterBlockBuilder exactly as LevelDB does; the table scope feeds
 * each distinct user key once to FullFilterBuilder.
 *
 * Allocation: per entry none (keys and values are copied into reused block buffers; the last key
 * lives in one growing buffer). Per data block: one separator key, and a view of the compressed
 * block (LZ4 blocks up to 64 KiB are compressed into one reused buffer, the addon's or the
 * WebAssembly module's memory; snappy's, and larger LZ4 ones, are fresh native buffers).
 * The filter builders keep the keys flat until they make their filter.
 *
 * Writes: blocks and their trailers are gathered in one OUTPUT_BUFFER-sized buffer and appended
 * to the file when it fills and at `finish` (LevelDB's WritableFile buffers 64 KiB the same way),
 * not two appends per block: a system call per 4 KiB block cost a tenth of a flush.
 */
import { invalidArgument } from '../errors.js';
import type { FilterPolicy } from '../filter/policy.js';
import { keyHash } from '../filter/ribbon-format.js';
import { commonPrefixLength, replaceAfterPrefix } from '../format/bytes.js';
import { getFixed32 } from '../format/coding.js';
import { bytewiseComparator } from '../format/comparator.js';
import { bytewiseInternalComparator, type InternalKeyComparator } from '../format/internal-key-comparator.js';
import { compareTrailers, INTERNAL_KEY_TRAILER_SIZE, ValueType } from '../format/internal-key.js';
import type { WritableFile } from '../fs/file-system.js';
import { BlockBuilder, DEFAULT_BLOCK_RESTART_INTERVAL } from './block-builder.js';
import { BLOCK_TRAILER_SIZE, writeBlockTrailer } from './block-trailer.js';
import { compressBlock, compressionTypeName, CompressionType, isSupportedCompressionType } from './compression.js';
import { FilterBlockBuilder } from './filter-block.js';
import { BlockHandle, Footer, footerFormatFor, MAX_BLOCK_HANDLE_LENGTH } from './footer.js';
import { FullFilterBuilder } from './full-filter-block.js';
import { addKeyHashToSketch, newKeySketch } from './key-sketch.js';
import { encodeMetaindex, filterBlockName, type FilterScope, PROPERTIES_BLOCK_NAME } from './metaindex.js';
import { encodeTableProperties, type TableProperties } from './table-properties.js';

/** LevelDB's default target for a data block's uncompressed size. */
export const DEFAULT_BLOCK_SIZE = 4096;

export interface TableBuilderOptions {
  /** Target uncompressed size of a data block; a block is cut once it reaches this. @defaultValue 4096 */
  blockSize?: number;
  /** Entries between full keys (restart points) in data blocks. @defaultValue 16 */
  blockRestartInterval?: number;
  /**
   * Compression of data, metaindex and index blocks; a block is stored compressed only if that
   * saves at least 1/8 of it, otherwise raw (type 0). @defaultValue CompressionType.LZ4
   */
  compression?: CompressionType;
  /** The policy that builds the filter; no filter without one. */
  filterPolicy?: FilterPolicy;
  /**
   * The policy of the whole-table filter (scopes 'table' and 'both'); `filterPolicy` when unset.
   * Only sievekv reads that filter, so it may be a stronger policy than LevelDB's Bloom.
   */
  tableFilterPolicy?: FilterPolicy;
  /**
   * Where the filter lives (see metaindex.ts); `'both'` writes the per-block filter block (for
   * LevelDB) and the whole-table filter (asked first by sievekv). @defaultValue 'block'
   */
  filterScope?: FilterScope | 'both';
  /** Order of the internal keys. @defaultValue the bytewise internal-key comparator */
  comparator?: InternalKeyComparator;
}

const TWO_POW_24 = 16777216;

type State = 'open' | 'finished' | 'abandoned' | 'failed';

/** Bytes gathered before an append to the file. */
const OUTPUT_BUFFER = 256 * 1024;

export class TableBuilder {
  private readonly file: WritableFile;
  private readonly comparator: InternalKeyComparator;
  /** The user keys' order is bytewise: addSlices compares by the shared prefix it measures. */
  private readonly bytewise: boolean;
  private readonly blockSize: number;
  private readonly compression: CompressionType;
  private readonly filterPolicy: FilterPolicy | undefined;
  private readonly tableFilterPolicy: FilterPolicy | undefined;
  private readonly filterScope: FilterScope | 'both';
  private readonly dataBlock: BlockBuilder;
  private readonly indexBlock = new BlockBuilder(1, 1024);
  private readonly blockFilter: FilterBlockBuilder | undefined;
  private readonly fullFilter: FullFilterBuilder | undefined;
  private readonly sketch = newKeySketch();
  /** The current user key's keyHash (key-sketch.ts). */
  private readonly keyHash = new Int32Array(2);

  private state: State = 'open';
  private error: unknown;
  /** Bytes written to the file so far (the next block's offset). */
  private offset = 0;
  /** File offset where the data blocks end (advanced as each data block is written). */
  private dataEnd = 0;
  private lastKey: Uint8Array = new Uint8Array(64);
  private lastKeyLen = 0;
  private firstKey: Uint8Array | undefined;
  /** The handle of the last data block, waiting for the next key to make its index key. */
  private pendingIndexEntry = false;
  private readonly pendingHandle = new BlockHandle();
  private readonly handleScratch = new Uint8Array(MAX_BLOCK_HANDLE_LENGTH);
  private readonly trailerScratch = new Uint8Array(BLOCK_TRAILER_SIZE);
  /** Blocks written and not yet appended to the file: `output[0, outputLen)`. */
  private readonly output = new Uint8Array(OUTPUT_BUFFER);
  private outputLen = 0;

  private entries = 0;
  private deletions = 0;
  private userKeys = 0;
  private rawKeySize = 0;
  private rawValueSize = 0;
  private dataBlocks = 0;
  private smallestSeq = Number.MAX_SAFE_INTEGER;
  private largestSeq = 0;
  private result: TableProperties | undefined;

  constructor(file: WritableFile, options: TableBuilderOptions = {}) {
    const blockSize = options.blockSize ?? DEFAULT_BLOCK_SIZE;
    if (!Number.isInteger(blockSize) || blockSize < 1) {
      throw invalidArgument(`blockSize must be an integer >= 1, got ${String(blockSize)}`);
    }
    const compression = options.compression ?? CompressionType.LZ4;
    if (!isSupportedCompressionType(compression)) {
      throw invalidArgument(`unsupported compression ${compressionTypeName(compression as number)}`);
    }
    const scope = options.filterScope ?? 'block';
    if (scope !== 'block' && scope !== 'table' && scope !== 'both') {
      throw invalidArgument(`filterScope must be 'block', 'table' or 'both', got ${String(scope)}`);
    }
    this.file = file;
    this.comparator = options.comparator ?? bytewiseInternalComparator;
    this.bytewise = this.comparator.user === bytewiseComparator;
    this.blockSize = blockSize;
    this.compression = compression;
    this.filterPolicy = options.filterPolicy;
    this.tableFilterPolicy = options.tableFilterPolicy ?? options.filterPolicy;
    this.filterScope = scope;
    this.dataBlock = new BlockBuilder(
      options.blockRestartInterval ?? DEFAULT_BLOCK_RESTART_INTERVAL,
      Math.min(blockSize + blockSize / 4 + 64, 1 << 20),
    );
    if (this.filterPolicy !== undefined) {
      if (scope !== 'table') {
        this.blockFilter = new FilterBlockBuilder(this.filterPolicy);
        this.blockFilter.startBlock(0);
      }
      if (scope !== 'block') this.fullFilter = new FullFilterBuilder(this.tableFilterPolicy!);
    }
  }

  /** Entries added so far. */
  get numEntries(): number {
    return this.entries;
  }

  /** Bytes written so far; after `finish`, the size of the whole file. */
  get fileSize(): number {
    return this.offset;
  }

  /** The first internal key added (owned copy), or undefined before any `add`. */
  get smallestKey(): Uint8Array | undefined {
    return this.firstKey?.slice();
  }

  /** The last internal key added (owned copy), or undefined before any `add`. */
  get largestKey(): Uint8Array | undefined {
    return this.entries === 0 ? undefined : this.lastKey.slice(0, this.lastKeyLen);
  }

  /** The properties written by `finish` (undefined before). */
  get properties(): TableProperties | undefined {
    return this.result;
  }

  /**
   * Appends an entry. `internalKey` (user key ‖ fixed64(seq << 8 | type), type 0 or 1) must sort
   * strictly after the previous key: INVALID_ARGUMENT otherwise. Both arrays are copied.
   */
  add(internalKey: Uint8Array, value: Uint8Array): void {
    this.addSlices(internalKey, 0, internalKey.length, value, 0, value.length);
  }

  /** `add` for `key[keyStart, keyEnd)` and `value[valueStart, valueEnd)`, without views. */
  addSlices(
    key: Uint8Array,
    keyStart: number,
    keyEnd: number,
    value: Uint8Array,
    valueStart: number,
    valueEnd: number,
  ): void {
    this.checkOpen('add');
    const keyLen = keyEnd - keyStart;
    if (keyLen < INTERNAL_KEY_TRAILER_SIZE) {
      throw invalidArgument(`TableBuilder.add: an internal key has at least 8 bytes, got ${keyLen}`);
    }
    const userEnd = keyEnd - INTERNAL_KEY_TRAILER_SIZE;
    const type = key[userEnd]!;
    if (type !== ValueType.VALUE && type !== ValueType.DELETION) {
      throw invalidArgument(`TableBuilder.add: bad value type ${type} in internal key`);
    }
    const cmp = this.comparator;
    const last = this.lastKey;
    const lastLen = this.lastKeyLen;
    // The prefix this key shares with the last one (none before the first): the data block's
    // prefix compression, and with bytewise order the comparison itself.
    const shared = commonPrefixLength(last, lastLen, key, keyStart, keyEnd);
    let newUserKey = true;
    if (this.entries > 0) {
      // Internal-key order is the user keys' order, then the trailers' (descending): one user-key
      // comparison both checks the order and tells a new user key. Bytewise, it is the first
      // byte that differs, or if one user key is a prefix of the other, the lengths.
      const lastUserEnd = lastLen - INTERNAL_KEY_TRAILER_SIZE;
      const userLen = keyLen - INTERNAL_KEY_TRAILER_SIZE;
      let c: number;
      if (!this.bytewise) c = cmp.user.compare(key, keyStart, userEnd, last, 0, lastUserEnd);
      else if (shared < userLen && shared < lastUserEnd) c = key[keyStart + shared]! - last[shared]!;
      else c = userLen - lastUserEnd;
      if (c < 0 || (c === 0 && compareTrailers(key, userEnd, keyEnd, last, lastUserEnd, lastLen) <= 0)) {
        throw invalidArgument('TableBuilder.add: keys must be added in strictly increasing order');
      }
      newUserKey = c !== 0;
    }
    try {
      if (this.pendingIndexEntry) {
        const separator = cmp.findShortestSeparator(last.subarray(0, lastLen), key.subarray(keyStart, keyEnd));
        this.addIndexEntry(separator);
      }
      if (newUserKey) {
        this.userKeys++;
        // One hash of the key for the sketch and the whole-table filter (either built-in policy).
        const hash = this.keyHash;
        keyHash(key, keyStart, userEnd, hash, 0);
        addKeyHashToSketch(this.sketch, hash[0]!, hash[1]!);
        this.fullFilter?.addDistinctKey(key, keyStart, userEnd, hash);
      }
      this.blockFilter?.addKey(key, keyStart, userEnd);

      this.rememberKey(shared, key, keyStart, keyEnd);
      const lo = getFixed32(key, userEnd);
      const hi = getFixed32(key, userEnd + 4);
      const seq = Math.min(hi * TWO_POW_24 + (lo >>> 8), Number.MAX_SAFE_INTEGER);
      if (seq < this.smallestSeq) this.smallestSeq = seq;
      if (seq > this.largestSeq) this.largestSeq = seq;
      if (type === ValueType.DELETION) this.deletions++;
      this.entries++;
      this.rawKeySize += keyLen;
      this.rawValueSize += valueEnd - valueStart;

      this.dataBlock.addSlicesSharing(shared, key, keyStart, keyEnd, value, valueStart, valueEnd);
      if (this.dataBlock.currentSizeEstimate() >= this.blockSize) this.flush();
    } catch (err) {
      throw this.fail(err);
    }
  }

  /**
   * Writes the last data block, the filter, properties, metaindex and index blocks and the
   * footer. Returns the properties written. The file is complete but neither synced nor closed.
   */
  finish(): TableProperties {
    this.checkOpen('finish');
    try {
      this.flush();
      const meta = new Map<string, BlockHandle>();
      let filterSize = 0;
      const policy = this.filterPolicy;
      if (policy !== undefined) {
        // 'both' writes LevelDB's per-block filter block and the whole-table filter.
        for (const [scope, builder, by] of [
          ['block', this.blockFilter, policy],
          ['table', this.fullFilter, this.tableFilterPolicy!],
        ] as const) {
          if (builder === undefined) continue;
          const contents = builder.finish();
          const handle = new BlockHandle();
          this.writeRawBlock(contents, CompressionType.NONE, handle);
          meta.set(filterBlockName(scope, by.name), handle);
          filterSize += contents.length + BLOCK_TRAILER_SIZE;
        }
      }

      if (this.pendingIndexEntry) {
        this.addIndexEntry(this.comparator.findShortSuccessor(this.lastKey.slice(0, this.lastKeyLen)));
      }
      // The index is compressed before the metaindex (the properties give its size) and written
      // after it: copied, since a compressed block lasts only until the next (compressBlock).
      const compressedIndex = this.compressed(this.indexBlock.finish());
      const index = compressedIndex.type === CompressionType.NONE ? compressedIndex : { stored: compressedIndex.stored.slice(), type: compressedIndex.type };

      const props: TableProperties = {
        numEntries: this.entries,
        numDeletions: this.deletions,
        numUserKeys: this.userKeys,
        rawKeySize: this.rawKeySize,
        rawValueSize: this.rawValueSize,
        dataSize: this.dataEnd,
        indexSize: index.stored.length + BLOCK_TRAILER_SIZE,
        filterSize,
        numDataBlocks: this.dataBlocks,
        smallestSequence: this.entries === 0 ? 0 : this.smallestSeq,
        largestSequence: this.largestSeq,
        filterPolicy: policy?.name ?? '',
        filterScope: policy === undefined ? '' : this.filterScope,
        compression: compressionTypeName(this.compression),
        keySketch: this.sketch,
      };
      const propsHandle = new BlockHandle();
      this.writeRawBlock(encodeTableProperties(props), CompressionType.NONE, propsHandle);
      meta.set(PROPERTIES_BLOCK_NAME, propsHandle);

      const metaindexHandle = new BlockHandle();
      const metaindex = this.compressed(encodeMetaindex(meta));
      this.writeRawBlock(metaindex.stored, metaindex.type, metaindexHandle);
      const indexHandle = new BlockHandle();
      this.writeRawBlock(index.stored, index.type, indexHandle);

      // LZ4 tables carry RocksDB's footer so RocksDB reads their blocks' framing (footer.ts).
      const footer = new Footer(metaindexHandle, indexHandle, footerFormatFor(this.compression)).encode();
      this.write(footer);
      this.offset += footer.length;
      this.flushOutput();
      this.state = 'finished';
      this.result = props;
      return props;
    } catch (err) {
      throw this.fail(err);
    }
  }

  /** Gives up on this table: nothing more is written. The caller removes the file. */
  abandon(): void {
    if (this.state === 'open' || this.state === 'failed') this.state = 'abandoned';
  }

  /** Cuts the current data block, if it has entries. */
  private flush(): void {
    if (this.dataBlock.empty) return;
    const block = this.compressed(this.dataBlock.finish());
    this.writeRawBlock(block.stored, block.type, this.pendingHandle);
    this.dataBlock.reset();
    this.pendingIndexEntry = true;
    this.dataBlocks++;
    this.dataEnd = this.offset;
    this.blockFilter?.startBlock(this.offset);
  }

  private addIndexEntry(key: Uint8Array): void {
    const n = this.pendingHandle.encodeTo(this.handleScratch, 0);
    this.indexBlock.addSlices(key, 0, key.length, this.handleScratch, 0, n);
    this.pendingIndexEntry = false;
  }

  /**
   * `raw` compressed with the builder's compression if that saves at least 1/8, else raw. A
   * compressed block may be a view valid only until the next call (compressBlock): write it first.
   */
  private compressed(raw: Uint8Array): { stored: Uint8Array; type: CompressionType } {
    if (this.compression !== CompressionType.NONE) {
      const c = compressBlock(this.compression, raw);
      if (c.length < raw.length - (raw.length >>> 3)) return { stored: c, type: this.compression };
    }
    return { stored: raw, type: CompressionType.NONE };
  }

  /** Appends `contents` and its trailer at the current offset; fills `handle`. */
  private writeRawBlock(contents: Uint8Array, type: CompressionType, handle: BlockHandle): void {
    handle.offset = this.offset;
    handle.size = contents.length;
    this.write(contents);
    writeBlockTrailer(this.trailerScratch, 0, contents, 0, contents.length, type);
    this.write(this.trailerScratch);
    this.offset += contents.length + BLOCK_TRAILER_SIZE;
  }

  /** Queues `bytes` for the file (copied): into the output buffer, or straight through if larger. */
  private write(bytes: Uint8Array): void {
    if (this.outputLen + bytes.length > this.output.length) this.flushOutput();
    if (bytes.length >= this.output.length) {
      this.file.append(bytes);
      return;
    }
    this.output.set(bytes, this.outputLen);
    this.outputLen += bytes.length;
  }

  private flushOutput(): void {
    if (this.outputLen === 0) return;
    const n = this.outputLen;
    this.outputLen = 0;
    this.file.append(this.output, 0, n);
  }

  /** Makes `key[start, end)` the last key; its first `shared` bytes are the last key's already. */
  private rememberKey(shared: number, key: Uint8Array, start: number, end: number): void {
    if (this.firstKey === undefined) this.firstKey = key.slice(start, end);
    this.lastKey = replaceAfterPrefix(this.lastKey, shared, key, start, end);
    this.lastKeyLen = end - start;
  }

  private checkOpen(op: string): void {
    if (this.state === 'failed') throw this.error;
    if (this.state !== 'open') throw invalidArgument(`TableBuilder.${op} after ${this.state === 'finished' ? 'finish' : 'abandon'}`);
  }

  private fail(err: unknown): unknown {
    this.state = 'failed';
    this.error = err;
    return err;
  }
}
