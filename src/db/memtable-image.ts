/**
 * The memtable image: what `close()` leaves so that the next open need not replay the WAL.
 *
 * Replaying a WAL decodes every record and loads the entries into a skiplist, in code V8 has not
 * optimized yet at an application's start: a process's first open of the directory bench/db's
 * overwrite leaves (a 2.2 MB WAL, 16,043 entries) took 77-87 ms, 42-43 ms with the image and its checks
 * (BENCHMARKS.md, issue 10 session 10). The memtable's storage is one buffer of offsets
 * (memtable/skiplist.ts), so close() can write it out as it is, and an open can read it back in
 * one copy.
 *
 * The WAL stays the truth; the image is a cache of it (plus one claim, the WALS_SYNCED flag
 * below), used only when it provably equals what a replay would build:
 * - It holds one or two memtables (parts): the one a flush was abandoned for, if any, then the live
 *   one. Each part names the WALs whose records it holds, each with its length and the CRC-32C of
 *   all its bytes, taken at close.
 * - An open uses it only if those WALs are, in order, the first live non-empty WALs, each of the
 *   same length and CRC now. Anything else (a WAL a crash cut short, bytes appended or damaged
 *   since, a WAL another program flushed away or replaced) and the open replays as always, and
 *   removes the image. WALs after those it names are replayed on top of it.
 * - The image's own bytes end in a CRC; one that does not verify, or whose figures or links do
 *   not hold together (skipListStateProblem: a layout changed without FORMAT_VERSION, a writer's
 *   bug), is ignored the same way. So a torn image (close writes it without fsync: a crash soon after
 *   may leave anything) costs a replay, never an entry.
 * - Only a database of one region, after a close with no background error.
 *
 * Format (`MEMTABLE` in the database directory, written as `MEMTABLE.tmp` and renamed; little-
 * endian; never read by LevelDB, which ignores the name):
 *
 *   magic "SKVMEMTB" (8) | format version u32 | part count u32 (1 or 2) | flags u32
 *   per part: highest sequence in it u64 | WAL count u32
 *             per WAL: number u64 | length u64 | CRC-32C of its bytes u32
 *             words u32 | entries u32 | height u32
 *             the skiplist's words in use (words × 4 bytes, memtable/skiplist.ts's node layout)
 *             filter words u32 | the memtable's Bloom filter (filter words × 4 bytes; 0: none)
 *   masked CRC-32C of everything before u32
 *
 * The filter is the memtable's (memtable/memtable-filter.ts) when it held every key at close; 0
 * words when the memtable had none or had not filled a deferred one. An open takes it as the
 * memtable's own when it has the size the options give now, and then neither searches the list
 * bare nor fills a filter: the first 20,000 absent-key reads of a fresh process took 6.4 µs each
 * with it against 7.9 with the filter deferred (BENCHMARKS.md, session 30). Its bits depend on the
 * filter's probes, seed and hash (persisted constants there): FORMAT_VERSION changes with them.
 * Unlike the storage (skipListStateProblem), nothing checks a saved filter against the keys: the
 * checksum vouches for its bytes, and a writer's bug there would make reads miss keys.
 *
 * Flags: bit 0 (WALS_SYNCED), every WAL the image names was durable through the length it names
 * (fdatasynced) before the image was put in place (renamed to MEMTABLE). An open that uses such
 * an image need not fdatasync those WALs again before their writes become readable (db-impl.ts,
 * #recover): close synced them. Other bits are reserved (an image with one set is ignored).
 *
 * The node layout is an in-memory format: FORMAT_VERSION changes whenever it does, and an image
 * of another version is ignored. The skiplist's int32 words and the filter's uint32 words are
 * written as the machine holds them; only a little-endian machine writes or reads images.
 */
import { TextEncoder } from 'node:util';
import { join } from 'node:path';
import { getFixed32, getFixed64, putFixed32, putFixed64 } from '../format/coding.js';
import { crc32c, maskCrc } from '../format/crc32c.js';
import type { FileSystem } from '../fs/file-system.js';
import { skipListStateProblem, type ListBuffer, type SkipListState, type SkipListView } from '../memtable/skiplist.js';
import { logFileName } from '../version/filenames.js';

export const MEMTABLE_IMAGE_FILE = 'MEMTABLE';
export const MEMTABLE_IMAGE_TEMP = 'MEMTABLE.tmp';

// Persisted: the file's layout (see the file comment). Never change without FORMAT_VERSION.
const MAGIC = new TextEncoder().encode('SKVMEMTB');
/**
 * Persisted. Bump whenever the skiplist's node layout, the memtable filter's bits (its probes,
 * seed or hash: memtable-filter.ts) or this file's layout change (2: the flags word; 3: the filters).
 */
const FORMAT_VERSION = 3;
const PREFIX_BYTES = 20;
/** Persisted: the flag saying that every WAL the image names was synced before it was put in place. */
const WALS_SYNCED = 1;
const WAL_BYTES = 20;
const STATE_BYTES = 12;
const MAX_PARTS = 2;
/**
 * The most WALs one part names: more is damage to a reader, and a writer writes no image then (a
 * live memtable that many short sessions resumed without a flush: the replay does it).
 */
export const MAX_IMAGE_WALS = 64;
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** A WAL as the image saw it. */
export interface WalStamp {
  number: number;
  length: number;
  crc: number;
}

/** Bytes `stampWal` reads at a time, into one buffer it keeps. */
const STAMP_CHUNK_BYTES = 256 * 1024;
let stampChunk: Uint8Array | null = null;

/**
 * The CRC-32C and length of all of WAL `number`'s bytes now, read a chunk at a time into a buffer
 * kept for the next call: a close and an open stamp each live WAL, up to a write buffer each, and
 * a fresh buffer of that size per WAL cost more than its CRC.
 */
export function stampWal(fs: FileSystem, dir: string, number: number): WalStamp {
  const file = fs.openReadable(logFileName(dir, number));
  try {
    const chunk = (stampChunk ??= new Uint8Array(STAMP_CHUNK_BYTES));
    let length = 0;
    let crc = 0;
    for (;;) {
      const n = file.readAt(chunk, 0, chunk.length, length);
      if (n === 0) break;
      crc = crc32c(chunk, 0, n, crc);
      length += n;
    }
    return { number, length, crc };
  } finally {
    file.close();
  }
}

/** One memtable to write: its storage in place, its highest sequence, and the WALs whose records it holds, in order. */
export interface ImagePartSource {
  wals: readonly WalStamp[];
  view: SkipListView;
  maxSequence: number;
  /** The memtable's Bloom filter if it holds every key (MemTable.completeFilter), else null. @defaultValue null */
  filter?: Uint32Array | null;
}

/** How `writeMemTableImage` writes. */
export interface ImageWriteOptions {
  /** Every WAL the parts name is durable through the length stamped once the image is in place (the WALS_SYNCED flag). @defaultValue false */
  walsSynced?: boolean;
  /** Rename MEMTABLE.tmp over MEMTABLE at once; if false the caller does (`placeMemTableImage`). @defaultValue true */
  place?: boolean;
}

/**
 * Writes the image of `parts` (oldest memtable first): to MEMTABLE.tmp, then renamed over
 * MEMTABLE. No fsync (see the file comment). Does nothing on a big-endian machine.
 */
export function writeMemTableImage(fs: FileSystem, dir: string, parts: readonly ImagePartSource[], options: ImageWriteOptions = {}): void {
  const { walsSynced = false, place = true } = options;
  if (!LITTLE_ENDIAN) return;
  const temp = join(dir, MEMTABLE_IMAGE_TEMP);
  const file = fs.createWritable(temp);
  let crc = 0;
  const put = (bytes: Uint8Array): void => {
    file.append(bytes);
    crc = crc32c(bytes, 0, bytes.length, crc);
  };
  try {
    const prefix = new Uint8Array(PREFIX_BYTES);
    prefix.set(MAGIC, 0);
    putFixed32(prefix, 8, FORMAT_VERSION);
    putFixed32(prefix, 12, parts.length);
    putFixed32(prefix, 16, walsSynced ? WALS_SYNCED : 0);
    put(prefix);
    for (const { wals, view, maxSequence, filter = null } of parts) {
      const header = new Uint8Array(12 + wals.length * WAL_BYTES + STATE_BYTES);
      putFixed64(header, 0, maxSequence);
      putFixed32(header, 8, wals.length);
      let at = 12;
      for (const w of wals) {
        putFixed64(header, at, w.number);
        putFixed64(header, at + 8, w.length);
        putFixed32(header, at + 16, w.crc);
        at += WAL_BYTES;
      }
      putFixed32(header, at, view.words);
      putFixed32(header, at + 4, view.count);
      putFixed32(header, at + 8, view.height);
      put(header);
      put(view.bytes);
      const filterHead = new Uint8Array(4);
      putFixed32(filterHead, 0, filter === null ? 0 : filter.length);
      put(filterHead);
      if (filter !== null) put(new Uint8Array(filter.buffer, filter.byteOffset, filter.byteLength));
    }
    const trailer = new Uint8Array(4);
    putFixed32(trailer, 0, maskCrc(crc));
    file.append(trailer);
  } finally {
    file.close();
  }
  if (place) placeMemTableImage(fs, dir);
}

/** Renames the image `writeMemTableImage` left in MEMTABLE.tmp over MEMTABLE. */
export function placeMemTableImage(fs: FileSystem, dir: string): void {
  fs.rename(join(dir, MEMTABLE_IMAGE_TEMP), join(dir, MEMTABLE_IMAGE_FILE));
}

/**
 * A memtable read back: the WALs it holds, its skiplist's storage and its highest sequence;
 * `walsSynced`, the image's flag that those WALs were synced before it was put in place.
 */
export interface ImagePart {
  wals: WalStamp[];
  state: { list: SkipListState; maxSequence: number };
  walsSynced: boolean;
  /** The memtable's Bloom filter as saved (see the file comment), or undefined if none was. */
  filter: Uint32Array | undefined;
}

/**
 * Reads `bytes` (a MEMTABLE file) into an image; each part's storage goes into `arena(bytes)`: a
 * buffer of at least that many bytes, which it reads over, every byte after them zero (a memtable
 * arena; by default a new buffer).
 * Returns why not if the bytes are not an intact image of this format.
 */
export function decodeMemTableImage(bytes: Uint8Array, arena: (used: number) => ListBuffer = (used) => new ArrayBuffer(used)): ImagePart[] | string {
  return decodeFrom(
    {
      size: bytes.length,
      read: (dst, length, position) => {
        if (position + length > bytes.length) return false;
        dst.set(bytes.subarray(position, position + length));
        return true;
      },
    },
    arena,
  );
}

/**
 * `decodeMemTableImage` of the file at `path`, read straight into its places: each part's storage
 * into its arena, the rest a few bytes at a time (no buffer of the file's size, and no second copy).
 */
export function readMemTableImage(fs: FileSystem, path: string, arena: (used: number) => ListBuffer): ImagePart[] | string {
  const file = fs.openReadable(path);
  try {
    return decodeFrom(
      {
        size: file.size,
        read: (dst, length, position) => {
          let done = 0;
          while (done < length) {
            const n = file.readAt(dst, done, length - done, position + done);
            if (n === 0) return false;
            done += n;
          }
          return true;
        },
      },
      arena,
    );
  } finally {
    file.close();
  }
}

/** Where an image is read from: `read` fills `dst[0, length)` from `position`, false if the source ends first. */
interface ImageSource {
  readonly size: number;
  read(dst: Uint8Array, length: number, position: number): boolean;
}

function decodeFrom(source: ImageSource, arena: (used: number) => ListBuffer): ImagePart[] | string {
  try {
    return decode(source, arena);
  } catch (err) {
    return (err as Error).message; // a 64-bit field past 2^53 (coding.ts)
  }
}

/**
 * Reads the image in one pass, extending the CRC over each piece as it comes, and checks it against
 * the trailer before any part's storage is walked (skipListStateProblem): every length is checked
 * against the bytes present before it is read or allocated.
 */
function decode(source: ImageSource, arena: (used: number) => ListBuffer): ImagePart[] | string {
  if (!LITTLE_ENDIAN) return 'a big-endian machine reads no images';
  const size = source.size;
  if (size < PREFIX_BYTES + 4) return `${size} bytes is too short`;
  const end = size - 4;
  const cut = (): string => `cut short at ${size} bytes`;
  const prefix = new Uint8Array(PREFIX_BYTES);
  if (!source.read(prefix, PREFIX_BYTES, 0)) return cut();
  for (let i = 0; i < MAGIC.length; i++) if (prefix[i] !== MAGIC[i]) return 'not a memtable image (bad magic)';
  // The figures are read before the checksum is known: one out of range is a reason too (another
  // format version's layout may differ from here on, so the version is asked first).
  const version = getFixed32(prefix, 8);
  if (version !== FORMAT_VERSION) return `format version ${version}, not ${FORMAT_VERSION}`;
  const partCount = getFixed32(prefix, 12);
  if (partCount < 1 || partCount > MAX_PARTS) return `${partCount} parts`;
  const flags = getFixed32(prefix, 16);
  if ((flags & ~WALS_SYNCED) !== 0) return `unknown flags ${flags}`;
  let crc = crc32c(prefix);
  const pending: { wals: WalStamp[]; maxSequence: number; list: SkipListState; filter: Uint32Array | undefined }[] = [];
  let at = PREFIX_BYTES;
  for (let p = 0; p < partCount; p++) {
    if (at + 12 > end) return `part ${p} does not fit`;
    const head = new Uint8Array(12);
    if (!source.read(head, 12, at)) return cut();
    const maxSequence = getFixed64(head, 0);
    const count = getFixed32(head, 8);
    if (count < 1 || count > MAX_IMAGE_WALS) return `${count} WALs in part ${p}`;
    const stateAt = at + 12 + count * WAL_BYTES;
    if (stateAt + STATE_BYTES > end) return `part ${p}'s ${count} WALs do not fit`;
    const rest = new Uint8Array(count * WAL_BYTES + STATE_BYTES);
    if (!source.read(rest, rest.length, at + 12)) return cut();
    crc = crc32c(rest, 0, rest.length, crc32c(head, 0, 12, crc));
    const wals: WalStamp[] = [];
    for (let w = 0; w < count * WAL_BYTES; w += WAL_BYTES) {
      wals.push({ number: getFixed64(rest, w), length: getFixed64(rest, w + 8), crc: getFixed32(rest, w + 16) });
    }
    const state = count * WAL_BYTES;
    const words = getFixed32(rest, state);
    const storageAt = stateAt + STATE_BYTES;
    const used = words * 4;
    if (storageAt + used > end) return `part ${p}: ${words} words of storage, ${end - storageAt} bytes present`;
    const buffer = arena(used);
    const storage = new Uint8Array(buffer, 0, used);
    if (!source.read(storage, used, storageAt)) return cut();
    crc = crc32c(storage, 0, used, crc);
    at = storageAt + used;
    if (at + 4 > end) return `part ${p}'s filter does not fit`;
    const filterHead = new Uint8Array(4);
    if (!source.read(filterHead, 4, at)) return cut();
    crc = crc32c(filterHead, 0, 4, crc);
    const filterLength = getFixed32(filterHead, 0);
    at += 4;
    if (filterLength > (end - at) / 4) return `part ${p}: a filter of ${filterLength} words, ${end - at} bytes present`;
    let filter: Uint32Array | undefined;
    if (filterLength > 0) {
      filter = new Uint32Array(filterLength);
      const filterBytes = new Uint8Array(filter.buffer);
      if (!source.read(filterBytes, filterBytes.length, at)) return cut();
      crc = crc32c(filterBytes, 0, filterBytes.length, crc);
      at += filterBytes.length;
    }
    pending.push({ wals, maxSequence, list: { buffer, words, count: getFixed32(rest, state + 4), height: getFixed32(rest, state + 8) }, filter });
  }
  if (at !== end) return `${end - at} bytes after the last part`;
  const trailer = new Uint8Array(4);
  if (!source.read(trailer, 4, end)) return cut();
  if (maskCrc(crc) !== getFixed32(trailer, 0)) return 'checksum mismatch';
  const parts: ImagePart[] = [];
  for (let p = 0; p < pending.length; p++) {
    const { wals, maxSequence, list, filter } = pending[p]!;
    const problem = skipListStateProblem(list, maxSequence);
    if (problem !== null) return `part ${p}: bad skiplist storage: ${problem}`;
    parts.push({ wals, state: { list, maxSequence }, walsSynced: (flags & WALS_SYNCED) !== 0, filter });
  }
  return parts;
}
