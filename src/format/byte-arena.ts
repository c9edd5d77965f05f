/**
 * Owned byte arrays carved one after another out of shared chunks: decoded blocks, and the key
 * buffers iterators start with; and the recycling of a block's bytes once nobody can read them.
 *
 * Why: every block read from a file needs bytes of its own (the block cache keeps it, iterators
 * hold it after eviction), and a fresh 4 KiB typed array is an off-heap allocation that costs V8
 * ~1-3 µs and garbage-collector bookkeeping, as much as reading and decoding the block. A view of a
 * chunk costs a small on-heap object. Small arrays have the opposite trap: V8 keeps a typed array
 * of up to 64 bytes inside its heap object, and the first `subarray` (or `.buffer`) of it moves the
 * bytes out to a new backing store; an iterator's key buffer, made per iterator and viewed at once,
 * paid that on every seek. A view of a chunk has its buffer from the start.
 *
 * Even carved, the bytes a loop of point reads allocates (4 KiB per block read) make V8 count
 * external memory and run full collections for it. So a block's bytes go back to a free list
 * (`recycleBytes`) once the block cache has dropped the block and no iterator pins it
 * (Block.drop / unpin), and the next block of the same size class takes them.
 *
 * Contract: the bytes `allocateBytes` returns are the caller's alone and never handed out again
 * until the caller gives them back with `recycleBytes`, promising that nothing reads them after.
 * Bytes never given back are freed by the garbage collector with their chunk, when no view of it
 * is left: one live block keeps its whole chunk alive, which CHUNK_SIZE bounds. Carved arrays of
 * CLASS_BYTES or more take a multiple of it (so a recycled one fits any length of its class);
 * shorter ones take a multiple of 8 and are not recycled; arrays larger than MAX_CARVED get their
 * own buffer. One arena per thread (module state).
 */

/** 32 KiB: seven 4 KiB blocks per allocation, and at most that much held by one block. */
const CHUNK_SIZE = 32 * 1024;

/** Larger arrays get a buffer of their own: a chunk would hold too few of them. */
const MAX_CARVED = 8 * 1024;

/** Carved arrays of at least CLASS_BYTES take a multiple of it: the size classes of recycling. */
const CLASS_SHIFT = 9;
const CLASS_BYTES = 1 << CLASS_SHIFT;

/** At most this many recycled bytes wait in the free lists; more are left to the collector. */
const MAX_FREE_BYTES = 1024 * 1024;

let chunk = new ArrayBuffer(CHUNK_SIZE);
let used = 0;
/** Recycled arrays by size class (length rounded up to CLASS_BYTES, divided by it). */
const free: Uint8Array[][] = Array.from({ length: MAX_CARVED / CLASS_BYTES + 1 }, () => []);
let freeBytes = 0;
/** The array the last `allocateBytes` returned, if carved (see isLastCarved). */
let lastCarved: Uint8Array | null = null;
let poison = false;

/** A new plain Uint8Array of `length` bytes (contents unspecified: the caller fills it). */
export function allocateBytes(length: number): Uint8Array {
  if (length > MAX_CARVED) {
    lastCarved = null;
    return new Uint8Array(length);
  }
  const sizeClass = (length + CLASS_BYTES - 1) >>> CLASS_SHIFT;
  if (length >= CLASS_BYTES) {
    const list = free[sizeClass]!;
    if (list.length > 0) {
      const old = list.pop()!;
      freeBytes -= sizeClass * CLASS_BYTES;
      return (lastCarved = new Uint8Array(old.buffer, old.byteOffset, length));
    }
  }
  // Views start 8-aligned: wider typed views may be laid over them.
  const reserved = length >= CLASS_BYTES ? sizeClass * CLASS_BYTES : (length + 7) & ~7;
  if (used + reserved > CHUNK_SIZE) {
    chunk = new ArrayBuffer(CHUNK_SIZE);
    used = 0;
  }
  const bytes = new Uint8Array(chunk, used, length);
  used += reserved;
  lastCarved = length >= CLASS_BYTES ? bytes : null;
  return bytes;
}

/**
 * True if `bytes` is the array the last `allocateBytes` call returned and it was carved in a size
 * class (so `recycleBytes` may take it back). A decoder's caller asks right after decoding.
 */
export function isLastCarved(bytes: Uint8Array): boolean {
  return bytes === lastCarved;
}

/**
 * Gives back carved bytes (`isLastCarved` said so when they were made) that nothing will read
 * again: a later `allocateBytes` of the same size class returns them.
 */
export function recycleBytes(bytes: Uint8Array): void {
  if (bytes.length < CLASS_BYTES || bytes.length > MAX_CARVED) return;
  const sizeClass = (bytes.length + CLASS_BYTES - 1) >>> CLASS_SHIFT;
  if (freeBytes + sizeClass * CLASS_BYTES > MAX_FREE_BYTES) return;
  if (poison) bytes.fill(0xa5);
  free[sizeClass]!.push(bytes);
  freeBytes += sizeClass * CLASS_BYTES;
}

/** @internal Tests: overwrite recycled bytes with 0xa5, so a read after recycling shows. */
export function setRecycledBytesPoison(on: boolean): void {
  poison = on;
}
