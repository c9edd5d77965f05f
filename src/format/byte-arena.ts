/**
 * Owned byte arrays carved one after another out of shared chunks: decoded blocks, the key
 * buffers iterators start with, and a merging iterator's small arrays (one made per seek).
 *
 * Why: every block read from a file needs bytes of its own (the block cache keeps it, iterators
 * hold it after eviction), and a fresh 4 KiB typed array is an off-heap allocation that costs V8
 * ~1-3 µs and garbage-collector bookkeeping, as much as reading and decoding the block. A view of a
 * chunk costs a small on-heap object. Small arrays have the opposite trap: V8 keeps a typed array
 * of up to 64 bytes inside its heap object, and the first `subarray` (or `.buffer`) of it moves the
 * bytes out to a new backing store; an iterator's key buffer, made per iterator and viewed at once,
 * paid that on every seek. A view of a chunk has its buffer from the start. (Data blocks' bytes
 * are reused as well, with their blocks: the block pool in sstable/block.ts.)
 *
 * Contract: the bytes `allocateBytes` returns are the caller's alone and never handed out again.
 * They are freed by the garbage collector with their chunk, when no view of it is left: one live
 * array keeps its whole chunk alive, which CHUNK_SIZE bounds. Carved arrays start 8-aligned;
 * arrays larger than MAX_CARVED get their own buffer. One arena per thread (module state).
 */

/** 32 KiB: seven 4 KiB blocks per allocation, and at most that much held by one block. */
const CHUNK_SIZE = 32 * 1024;

/** Larger arrays get a buffer of their own: a chunk would hold too few of them. */
const MAX_CARVED = 8 * 1024;

let chunk = new ArrayBuffer(CHUNK_SIZE);
let used = 0;

/** A new plain Uint8Array of `length` bytes (contents unspecified: the caller fills it). */
export function allocateBytes(length: number): Uint8Array {
  if (length > MAX_CARVED) return new Uint8Array(length);
  // Views start 8-aligned: wider typed views may be laid over them.
  const reserved = (length + 7) & ~7;
  if (used + reserved > CHUNK_SIZE) {
    chunk = new ArrayBuffer(CHUNK_SIZE);
    used = 0;
  }
  const bytes = new Uint8Array(chunk, used, length);
  used += reserved;
  return bytes;
}
