/**
 * Block compression: the type byte of every block trailer and the codecs behind it.
 *
 *   0 none    the contents as they are.
 *   1 snappy  Snappy's raw format (what LevelDB writes): varint32 uncompressed length, then
 *             Snappy elements. Through the `snappy` package's compressSync / uncompressSync
 *             (raw, not framed), loaded at the first snappy block: a process that meets none
 *             (sievekv writes lz4) does not pay the ~8 MB of RSS the addon takes once loaded.
 *   4 lz4     RocksDB's kLZ4Compression with format_version >= 2: varint32 uncompressed length,
 *             then one raw LZ4 block (no frame). RocksDB reads it in a table whose footer says
 *             format_version 2, as LZ4 tables' footers do (footer.ts); LevelDB cannot.
 *             Compressed for blocks of up to 64 KiB by the addon's compressor (native/lz4.c)
 *             or, without the addon, by our WebAssembly one (lz4-wasm-encoder.ts), the same
 *             algorithm and bytes; larger blocks by lz4-napi, whose compressSync speaks a raw
 *             LZ4 block behind a 4-byte little-endian length: the varint replaces that prefix
 *             in place (no copy for blocks under 256 MiB). Decoded by our WebAssembly decoder
 *             (lz4-wasm.ts) into bytes from the byte arena (format/byte-arena.ts), or the
 *             caller's (a point lookup reads its block where the decoder wrote it:
 *             decompressForLookup); blocks over WASM_MAX_BYTES, or a Node without WebAssembly,
 *             go to lz4-napi's uncompressSync behind the same 4-byte prefix.
 *
 * Other LevelDB/RocksDB types (2 zstd in LevelDB / zlib in RocksDB, 3 bzip2, 5 lz4hc, 7 zstd)
 * are NOT_SUPPORTED. Decompression never trusts the stored length: it must be at most
 * `maxSize` and at most what the codec could expand the stored bytes to (Snappy < 22x,
 * LZ4 < 256x), so a corrupt header cannot make us allocate more than a small multiple of the
 * bytes actually read; the result must have exactly the stored length. Every codec failure is
 * CORRUPTION naming the file and the block's offset.
 */
import { Buffer } from 'node:buffer';
import { createRequire } from 'node:module';
import { corruption, notSupported } from '../errors.js';
import { allocateBytes } from '../format/byte-arena.js';
import { getFixed32, putFixed32 } from '../format/coding.js';
import { putVarint32, varint32Length } from '../format/varint.js';
import { nativeAddon } from '../native.js';
import { lz4Compress, MAX_HEADER_LENGTH, MAX_INPUT, maxCompressedLength } from './lz4-wasm-encoder.js';
import { LOOKUP_OUTPUT_START, type Lz4WasmDecoder, lz4WasmDecoder, SLACK, WASM_MAX_BYTES } from './lz4-wasm.js';

/** A native addon loaded at its first use; NOT_SUPPORTED if it cannot be (its binary missing for this platform). */
class LazyAddon<T> {
  #codec: T | undefined;

  constructor(
    /** What needs it, for the error: that says nothing about the block's bytes. */
    private readonly what: string,
    private readonly name: string,
    private load: () => T,
  ) {}

  get(file?: string, offset?: number): T {
    if (this.#codec !== undefined) return this.#codec;
    try {
      this.#codec = this.load();
    } catch (cause) {
      throw notSupported(`${this.what}: the ${this.name} addon could not be loaded`, { file, offset, cause });
    }
    return this.#codec;
  }

  /** Tests: replaces how the addon is loaded (and forgets one loaded); returns the previous loader. */
  replaceLoader(load: () => T): () => T {
    const previous = this.load;
    this.load = load;
    this.#codec = undefined;
    return previous;
  }
}

type Snappy = Pick<typeof import('snappy'), 'compressSync' | 'uncompressSync'>;
/** The `snappy` addon, loaded at the first snappy block (see the file comment). */
const snappy = new LazyAddon('snappy compression', 'snappy', () => createRequire(import.meta.url)('snappy') as Snappy);

type Lz4Napi = Pick<typeof import('lz4-napi'), 'compressSync' | 'uncompressSync'>;
/**
 * The `lz4-napi` addon, loaded on first use: only blocks over 64 KiB (compression) or
 * WASM_MAX_BYTES (decompression), or a Node without WebAssembly, need it. Imported at start-up it
 * cost every process, and every worker thread at its start, 20 ms (its loader, and the ES module
 * loader's parse of it), and a worker's start-up delays the first flush (compaction/runner.ts).
 */
const lz4Napi = new LazyAddon('large lz4 blocks (over 64 KiB to compress, over 1 MiB to decode)', 'lz4-napi', () => createRequire(import.meta.url)('lz4-napi') as Lz4Napi);

/** @internal Tests: replaces how the snappy addon is loaded (and forgets one loaded); returns the previous loader. */
export function setSnappyLoaderForTests(loader: () => Snappy): () => Snappy {
  return snappy.replaceLoader(loader);
}

/** @internal Tests: replaces how the lz4-napi addon is loaded (and forgets one loaded); returns the previous loader. */
export function setLz4NapiLoaderForTests(loader: () => Lz4Napi): () => Lz4Napi {
  return lz4Napi.replaceLoader(loader);
}

/** Persisted: the compression type byte of block trailers. Never renumber. */
export const CompressionType = {
  NONE: 0,
  SNAPPY: 1,
  LZ4: 4,
} as const;
export type CompressionType = (typeof CompressionType)[keyof typeof CompressionType];

/**
 * The default bound on a block's uncompressed size. Blocks are ~4 KiB, but one entry larger than
 * the block size makes a block of its own size; 256 MiB allows any sane value while refusing a
 * corrupt length early. (The ratio bound above applies as well.)
 */
export const DEFAULT_MAX_UNCOMPRESSED_BLOCK_SIZE = 256 * 1024 * 1024;

/** Snappy expands at most 64 bytes per 3-byte copy element; 32x is a safe upper bound. */
const SNAPPY_MAX_RATIO = 32;
/** LZ4 expands at most 255 bytes per length byte; 256x plus a constant is a safe upper bound. */
const LZ4_MAX_RATIO = 256;

const TYPE_NAMES: Record<number, string> = {
  0: 'none',
  1: 'snappy',
  2: 'zstd (LevelDB) / zlib (RocksDB)',
  3: 'bzip2 (RocksDB)',
  4: 'lz4',
  5: 'lz4hc (RocksDB)',
  6: 'xpress (RocksDB)',
  7: 'zstd (RocksDB)',
};

/** A readable name for a trailer's type byte (for messages and the dump tool). */
export function compressionTypeName(type: number): string {
  return TYPE_NAMES[type] ?? `unknown (${type})`;
}

export function isSupportedCompressionType(type: number): type is CompressionType {
  return type === CompressionType.NONE || type === CompressionType.SNAPPY || type === CompressionType.LZ4;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * A plain Uint8Array view of a codec's Buffer: block contents are always plain arrays, so
 * `slice()` on a key or value copies (Buffer's `slice` would not) and element access sites see
 * one array shape.
 */
function plain(b: Buffer): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
}

/** The addon's LZ4 compressor, or undefined where the addon is missing (or predates it). */
const nativeLz4Compress = nativeAddon?.lz4Compress;
/** Where the addon compresses LZ4 blocks: MAX_HEADER_LENGTH bytes of room for the framing, then the block. */
let nativeLz4Output: Uint8Array | undefined;

/**
 * `lz4Compress` (lz4-wasm-encoder.ts) by the addon: `raw` as a raw LZ4 block behind
 * `headerLength` bytes, a view valid until this thread's next call; undefined over MAX_INPUT.
 */
function lz4CompressNative(compress: NonNullable<typeof nativeLz4Compress>, raw: Uint8Array, headerLength: number): Uint8Array | undefined {
  if (raw.length > MAX_INPUT) return undefined;
  const out = (nativeLz4Output ??= new Uint8Array(MAX_HEADER_LENGTH + maxCompressedLength(MAX_INPUT)));
  const n = compress(raw, 0, raw.length, out, MAX_HEADER_LENGTH);
  return out.subarray(MAX_HEADER_LENGTH - headerLength, MAX_HEADER_LENGTH + n);
}

/**
 * `raw` compressed with `type`. For NONE it returns `raw` itself. LZ4 blocks of up to
 * MAX_INPUT bytes come from the addon's or the WebAssembly compressor, as a view of its output
 * valid until this thread's next `compressBlock`: copy it before then (the table builder writes
 * it out at once).
 * Otherwise an owned array (or a view of one). The table builder decides whether the result is
 * worth keeping.
 */
export function compressBlock(type: CompressionType, raw: Uint8Array): Uint8Array {
  switch (type) {
    case CompressionType.NONE:
      return raw;
    case CompressionType.SNAPPY:
      return snappy.get().compressSync(raw);
    case CompressionType.LZ4: {
      const size = raw.length;
      const headerLen = varint32Length(size);
      const framed = nativeLz4Compress !== undefined ? lz4CompressNative(nativeLz4Compress, raw, headerLen) : lz4Compress(raw, headerLen);
      if (framed !== undefined) {
        putVarint32(framed, 0, size);
        return framed;
      }
      const out = lz4Napi.get().compressSync(asBuffer(raw));
      if (out.length < 4 || getFixed32(out, 0) !== size) {
        throw new Error('lz4-napi compressSync no longer prefixes the raw block with its length');
      }
      if (headerLen <= 4) {
        // Replace lz4-napi's 4-byte little-endian length with the varint, right-aligned.
        putVarint32(out, 4 - headerLen, size);
        return out.subarray(4 - headerLen);
      }
      const copy = new Uint8Array(headerLen + out.length - 4);
      putVarint32(copy, 0, size);
      copy.set(out.subarray(4), headerLen);
      return copy;
    }
    default:
      throw notSupported(`compression type ${compressionTypeName(type)}`);
  }
}

/**
 * The uncompressed contents of a block stored with trailer type `type`. For NONE, `bytes`
 * itself; otherwise new owned plain Uint8Array bytes (never a Buffer). `file` and `offset` (the block's file offset) name the
 * block in errors. CORRUPTION for bad data, NOT_SUPPORTED for a type this build cannot read.
 */
export function decompressBlock(
  type: number,
  bytes: Uint8Array,
  file?: string,
  offset?: number,
  maxSize: number = DEFAULT_MAX_UNCOMPRESSED_BLOCK_SIZE,
): Uint8Array {
  switch (type) {
    case CompressionType.NONE:
      return bytes;
    case CompressionType.SNAPPY: {
      const declared = readDeclaredSize(bytes, 0, bytes.length, 'snappy', file, offset, maxSize, SNAPPY_MAX_RATIO * bytes.length);
      const codec = snappy.get(file, offset);
      let out: Buffer;
      try {
        out = codec.uncompressSync(bytes, { asBuffer: true }) as Buffer;
      } catch (cause) {
        throw corruption('corrupted snappy compressed block contents', { file, offset, cause });
      }
      if (out.length !== declared) {
        throw corruption(`snappy block decompressed to ${out.length} bytes, header says ${declared}`, { file, offset });
      }
      return plain(out);
    }
    case CompressionType.LZ4: {
      const declared = readDeclaredSize(bytes, 0, bytes.length, 'lz4', file, offset, maxSize, LZ4_MAX_RATIO * bytes.length + 64);
      const bodyStart = declaredEnd;
      const wasm = lz4WasmDecoder();
      if (wasm !== undefined && bytes.length + declared <= WASM_MAX_BYTES) {
        return decodeLz4InWasm(wasm, bytes, bodyStart, bytes.length, declared, file, offset);
      }
      const body = bytes.length - bodyStart;
      const framed = Buffer.allocUnsafe(4 + body);
      putFixed32(framed, 0, declared);
      framed.set(bytes.subarray(bodyStart), 4);
      return checkedLz4Napi(framed, declared, file, offset);
    }
    default:
      throw notSupported(`block compression type ${compressionTypeName(type)} is not supported`, { file, offset });
  }
}

/**
 * As `decompressBlock`, for a block read into a reusable scratch buffer: `bytes` =
 * `scratch[start, start + size)` with at least 4 spare bytes before `start`, which this may
 * overwrite together with the block's varint header (lz4-napi's 4-byte length prefix goes there,
 * so the napi path makes no framing copy). The result never aliases `scratch`: NONE is copied out,
 * LZ4 decoded into new bytes. The caller verified the checksum before. `take(length)` gives the
 * bytes to write the contents of NONE and of WebAssembly's LZ4 into, at `[0, length)` (default:
 * exactly `length` from the byte arena); the other decoders return bytes of their own.
 */
export function decompressBlockInScratch(
  type: number,
  scratch: Buffer,
  start: number,
  size: number,
  file?: string,
  offset?: number,
  maxSize: number = DEFAULT_MAX_UNCOMPRESSED_BLOCK_SIZE,
  take: (length: number) => Uint8Array = allocateBytes,
): Uint8Array {
  if (type === CompressionType.NONE) {
    const contents = take(size);
    contents.set(scratch.subarray(start, start + size));
    return contents;
  }
  if (type !== CompressionType.LZ4) return decompressBlock(type, scratch.subarray(start, start + size), file, offset, maxSize);
  const declared = readDeclaredSize(scratch, start, start + size, 'lz4', file, offset, maxSize, LZ4_MAX_RATIO * size + 64);
  const bodyStart = declaredEnd;
  const wasm = lz4WasmDecoder();
  if (wasm !== undefined && size + declared <= WASM_MAX_BYTES) {
    return decodeLz4InWasm(wasm, scratch, bodyStart, start + size, declared, file, offset, take);
  }
  // lz4-napi takes a 4-byte little-endian length then the raw block: write it to end where the
  // body starts, over the varint header (1..5 bytes) and the spare bytes before it.
  putFixed32(scratch, bodyStart - 4, declared);
  return checkedLz4Napi(scratch.subarray(bodyStart - 4, start + size), declared, file, offset);
}

/** The block the last `decompressForLookup` returned is `[0, lookupLength)` of the bytes it returned. */
export let lookupLength = 0;
/** Where `decompressForLookup` puts what the WebAssembly decoder does not keep (grown as needed). */
let lookupBytes = new Uint8Array(16 * 1024);

function takeLookupBytes(length: number): Uint8Array {
  if (length > lookupBytes.length) lookupBytes = new Uint8Array(Math.max(length, 2 * lookupBytes.length));
  lookupLength = length;
  return lookupBytes;
}

/**
 * As `decompressBlockInScratch`, for a point lookup, which is done with the block before this
 * thread decodes another: the contents are `[0, lookupLength)` of the bytes returned, valid until
 * this thread's next decode. An LZ4 block is decoded where the WebAssembly decoder leaves it (its
 * memory; no copy out, nothing allocated); other blocks go into one reused buffer, or are the
 * codec's own bytes.
 */
export function decompressForLookup(
  type: number,
  scratch: Buffer,
  start: number,
  size: number,
  file?: string,
  offset?: number,
  maxSize: number = DEFAULT_MAX_UNCOMPRESSED_BLOCK_SIZE,
): Uint8Array {
  if (type === CompressionType.LZ4) {
    const wasm = lz4WasmDecoder();
    if (wasm !== undefined) {
      const declared = readDeclaredSize(scratch, start, start + size, 'lz4', file, offset, maxSize, LZ4_MAX_RATIO * size + 64);
      const bodyStart = declaredEnd;
      const bodyLength = start + size - bodyStart;
      if (bodyLength + SLACK <= LOOKUP_OUTPUT_START && declared <= wasm.output.length) {
        decodeInWasm(wasm, scratch, bodyStart, start + size, LOOKUP_OUTPUT_START, declared, file, offset);
        lookupLength = declared;
        return wasm.output;
      }
    }
  }
  const contents = decompressBlockInScratch(type, scratch, start, size, file, offset, maxSize, takeLookupBytes);
  if (contents !== lookupBytes) lookupLength = contents.length; // snappy's, lz4-napi's own bytes
  return contents;
}

/**
 * Copies the raw LZ4 block `bytes[bodyStart, bodyEnd)` to the start of the WebAssembly module's
 * memory and decodes it to `dst` there; CORRUPTION unless it decodes to exactly `declared` bytes.
 * Requires SLACK bytes between the body's end and `dst`, and `dst + declared` inside the memory.
 */
function decodeInWasm(
  wasm: Lz4WasmDecoder,
  bytes: Uint8Array,
  bodyStart: number,
  bodyEnd: number,
  dst: number,
  declared: number,
  file: string | undefined,
  offset: number | undefined,
): void {
  const bodyLength = bodyEnd - bodyStart;
  wasm.bytes.set(bytes.subarray(bodyStart, bodyEnd), 0);
  const written = wasm.decode(0, bodyLength, dst, dst + declared);
  if (written < 0) throw corruption('corrupted lz4 compressed block contents', { file, offset });
  if (written !== declared) {
    throw corruption(`lz4 block decompressed to ${written} bytes, header says ${declared}`, { file, offset });
  }
}

/**
 * The raw LZ4 block `bytes[bodyStart, bodyEnd)` decoded by the WebAssembly module (lz4-wasm.ts)
 * into the bytes `take(declared)` gives. Requires `bodyEnd - bodyStart + declared <= WASM_MAX_BYTES`.
 */
function decodeLz4InWasm(
  wasm: Lz4WasmDecoder,
  bytes: Uint8Array,
  bodyStart: number,
  bodyEnd: number,
  declared: number,
  file: string | undefined,
  offset: number | undefined,
  take: (length: number) => Uint8Array = allocateBytes,
): Uint8Array {
  const dst = (bodyEnd - bodyStart + SLACK + 7) & ~7;
  decodeInWasm(wasm, bytes, bodyStart, bodyEnd, dst, declared, file, offset);
  const contents = take(declared);
  contents.set(wasm.bytes.subarray(dst, dst + declared));
  return contents;
}

/** lz4-napi's decoding of `framed` (4-byte length, raw block), checked to give `declared` bytes. */
function checkedLz4Napi(framed: Buffer, declared: number, file: string | undefined, offset: number | undefined): Uint8Array {
  const codec = lz4Napi.get(file, offset); // outside the try: a missing addon is no damage
  let out: Buffer;
  try {
    out = codec.uncompressSync(framed);
  } catch (cause) {
    throw corruption('corrupted lz4 compressed block contents', { file, offset, cause });
  }
  if (out.length !== declared) {
    throw corruption(`lz4 block decompressed to ${out.length} bytes, header says ${declared}`, { file, offset });
  }
  return plain(out);
}

/** Where the varint the last `readDeclaredSize` read ends: the compressed body starts there. */
let declaredEnd = 0;

/**
 * Reads and bounds the varint32 uncompressed length at `bytes[start]` (the start of a compressed
 * block that ends at `end`), in place; `declaredEnd` is then where the body starts.
 */
function readDeclaredSize(
  bytes: Uint8Array,
  start: number,
  end: number,
  codec: string,
  file: string | undefined,
  offset: number | undefined,
  maxSize: number,
  ratioBound: number,
): number {
  let declared = 0;
  let p = start;
  for (let shift = 0; ; shift += 7) {
    if (p >= end) throw corruption(`corrupted ${codec} compressed block length: truncated varint32`, { file, offset });
    const b = bytes[p++]!;
    if (shift === 28 && b > 0x0f) throw corruption(`corrupted ${codec} compressed block length: varint32 overflows 32 bits`, { file, offset });
    declared |= (b & 0x7f) << shift;
    if (b < 0x80) break;
  }
  declared >>>= 0;
  declaredEnd = p;
  if (declared > maxSize || declared > ratioBound) {
    throw corruption(
      `${codec} block claims ${declared} uncompressed bytes from ${end - start} (limit ${Math.min(maxSize, ratioBound)})`,
      { file, offset },
    );
  }
  return declared;
}
