/**
 * The memtable's ordered index: a skiplist (Pugh 1990, after LevelDB's db/skiplist.h) of entries
 * in internal-key order — user key ascending (bytewise), then sequence number descending.
 *
 * Layout, for V8 and the cache: no object per entry. Every node lives in one buffer, as LevelDB's
 * nodes live in its arena: a header of int32 words — tower height, user key length, value length,
 * then `height` next pointers — followed by the internal key (user key ‖ 8-byte trailer, the
 * sequence and type exactly as a table stores them) and the value, padded to a word. A node is
 * its word index; 0 is the head, and 0 as a pointer means "none". A search step reads the next
 * pointer of the node it stands on and the next node's header and key, which sit side by side: one
 * cache miss per step where separate record and key arrays took two. Towers are as tall as the
 * node's height (most nodes have one pointer), so a node costs 12 + 4·height bytes beyond its key
 * and value.
 *
 * Once the memtable is full, a flush on a worker thread reads the buffer in place (a database's
 * arenas are SharedArrayBuffers; a plain buffer is copied once and the copy transferred), and its
 * table builder takes the internal keys and values straight from it.
 *
 * Insert-only: nothing is removed, so node indexes stay valid for the list's lifetime and bytes
 * returned by `keyOf`/`valueOf` are not overwritten while the list has its storage (a grown
 * buffer is a new one; old views keep the old one alive). `releaseStorage` ends that: the buffer
 * goes to another list (memtable/arena-pool.ts), so only a list no one reads may release it.
 * Single-threaded: owned by the database's JavaScript thread; other threads only read a list no
 * one inserts into anymore.
 *
 * Invariant: no two entries have the same (user key, sequence) — every write has its own
 * sequence number, so insertion order never decides ties.
 */
import { Buffer } from 'node:buffer';
import { compareInternalKeys, readSequence, writeTrailer, type ValueType } from '../format/internal-key.js';
import { RUN_FIELDS } from './entry-run.js';

/** Tallest tower. With branching 4, 12 levels serve 4^12 ≈ 16M entries at full speed. */
const MAX_HEIGHT = 12;
/** One in BRANCHING nodes of height h also reaches h + 1. */
const BRANCHING = 4;

// Node header, in int32 words from the node's index.
const HEIGHT = 0;
const KEY_LEN = 1; // the user key's length; the internal key is 8 bytes longer
const VALUE_LEN = 2;
const NEXT = 3; // NEXT + level, level < height
const TRAILER = 8;
/** The head: a full tower and an empty key. */
const HEAD_WORDS = NEXT + MAX_HEIGHT;

/** Keys longer than this compare with memcmp (Buffer#compare); shorter ones with a JS loop. */
const NATIVE_COMPARE_FROM = 32;
const INITIAL_BYTES = 64 * 1024;
const TWO_POW_24 = 16777216;

/**
 * A list's buffer: an ArrayBuffer, or a SharedArrayBuffer (a database's recycled arenas,
 * memtable/arena-pool.ts), which a flush's worker reads in place.
 */
export type ListBuffer = ArrayBuffer | SharedArrayBuffer;

/** A skiplist's storage, structured-cloneable (a shared buffer is shared, a plain one copied or transferred). */
export interface SkipListState {
  buffer: ListBuffer;
  /** Words in use. */
  words: number;
  count: number;
  height: number;
}

/** A list's storage in place: the words in use as bytes, and the figures of SkipListState. */
export interface SkipListView {
  bytes: Uint8Array;
  words: number;
  count: number;
  height: number;
}

/**
 * A plain ArrayBuffer, not a SharedArrayBuffer, for a list that allocates its own (one without an
 * arena, or grown past it): V8 counts an ArrayBuffer's bytes as external memory and collects a
 * dead one promptly, while dead SharedArrayBuffers piled up (170 MB of them at the peak of a
 * 1,000,000-key fill, before arenas were recycled). A flush gets a copy of such a buffer. A
 * database's arenas are shared buffers, recycled so that few are ever dropped (arena-pool.ts).
 */
function allocate(bytes: number): ArrayBuffer {
  return new ArrayBuffer(bytes);
}

/** The bytes of a list's first buffer for `initialBytes`: whole words, at least 1 KiB (the memtable arenas' size too). */
export function storageBytes(initialBytes: number): number {
  return Math.max(1024, (initialBytes + 3) & ~3);
}

/**
 * Why `state` (read from a file, its checksum verified) cannot be a list's storage, or null if
 * it can. The checksum says the bytes are what some writer wrote, not that the writer's layout is
 * this one: every figure and link is checked before a list follows it. The head is at word 0 and
 * links nothing above `height`; the level-0 chain visits exactly `count` nodes, each whole inside
 * the storage, of a height in [1, height], in strictly ascending internal-key order, with no
 * sequence above `maxSequence`; each higher level links exactly the nodes taller than it, in that
 * order. O(entries), one pass. (A sequence past 2^53 − 1 throws CORRUPTION, as readSequence does.)
 */
export function skipListStateProblem(state: SkipListState, maxSequence = Number.MAX_SAFE_INTEGER): string | null {
  const { buffer, words, count, height } = state;
  if (!Number.isInteger(words) || words < HEAD_WORDS || words * 4 > buffer.byteLength) return `${words} words in use in ${buffer.byteLength} bytes`;
  if (!Number.isInteger(height) || height < 1 || height > MAX_HEIGHT) return `height ${height}`;
  if (!Number.isInteger(count) || count < 0 || count > words) return `${count} entries in ${words} words`;
  const w = new Int32Array(buffer, 0, words);
  const bytes = new Uint8Array(buffer, 0, words * 4);
  if (w[HEIGHT] !== MAX_HEIGHT) return 'no head at word 0';
  for (let level = height; level < MAX_HEIGHT; level++) if (w[NEXT + level] !== 0) return `the head links level ${level}, above the height`;
  return chainProblem(w, bytes, count, height, maxSequence);
}

/**
 * The walk of skipListStateProblem, in one loop (this runs once per open, mostly before V8 has
 * optimized it: see memtable.ts). Each level's chain must be exactly the nodes taller than it, in
 * level-0 order: `expected[level]` is where that chain goes next, and every node met on level 0
 * must be it at each of its tower's levels.
 */
function chainProblem(w: Int32Array, bytes: Uint8Array, count: number, height: number, maxSequence: number): string | null {
  const words = w.length;
  const bytesPresent = words * 4;
  const expected = new Int32Array(MAX_HEIGHT);
  for (let level = 1; level < height; level++) expected[level] = w[NEXT + level]!;
  let prev = 0;
  let prevKey = 0;
  let prevKeyEnd = 0;
  let n = 0;
  for (let node = w[NEXT]!; node !== 0; node = w[node + NEXT]!) {
    if (node < HEAD_WORDS || node >= words) return `level 0 links to word ${node}`;
    if (++n > count) return `more than ${count} entries on level 0`;
    const h = w[node + HEIGHT]!;
    const keyLen = w[node + KEY_LEN]!;
    const valueLen = w[node + VALUE_LEN]!;
    if (h < 1 || h > height || keyLen < 0 || valueLen < 0) return `node ${node}: height ${h}, key ${keyLen} bytes, value ${valueLen} bytes`;
    // Each length against the storage first: two near 2^31 would wrap the sum below (>>> is mod 2^32).
    if (keyLen > bytesPresent || valueLen > bytesPresent || node + NEXT + h + ((keyLen + TRAILER + valueLen + 3) >>> 2) > words) {
      return `node ${node} runs past the storage`;
    }
    for (let level = 1; level < h; level++) {
      if (expected[level] !== node) return `level ${level} goes to word ${expected[level]} where node ${node} stands`;
      expected[level] = w[node + NEXT + level]!;
    }
    const key = (node + NEXT + h) << 2;
    const keyEnd = key + keyLen + TRAILER;
    if (readSequence(bytes, keyEnd) > maxSequence) return `node ${node}: a sequence above ${maxSequence}`;
    if (prev !== 0 && compareInternalKeys(bytes, prevKey, prevKeyEnd, bytes, key, keyEnd) >= 0) return `nodes ${prev} and ${node} out of order`;
    prev = node;
    prevKey = key;
    prevKeyEnd = keyEnd;
  }
  if (n !== count) return `${n} entries on level 0, ${count} counted`;
  for (let level = 1; level < height; level++) if (expected[level] !== 0) return `level ${level} goes on past the last node`;
  return null;
}

/**
 * A walk of a list's storage in slices (SkipList.walkStorage, then checkStorageLinks): the pass
 * userKeyRangesInStorage makes, resumable, so that a memtable's deferred Bloom filter is filled a
 * slice per search. One pass inside one get cost 20-37 ms on a 4 MiB image in a fresh process (the
 * loop ran once, before V8 had compiled it); slices of a function called hundreds of times run
 * compiled after the first few. The walk covers the nodes the storage held when it began (`end`,
 * `count`): nodes inserted since lie past `end`, spliced in between those by the list itself, so
 * the link check follows them on to the first node of the walk's (checkStorageLinks).
 */
export class StorageWalk {
  /** The next node to tile, then (once `linking`) the next node whose level-0 link is checked. */
  at = HEAD_WORDS;
  /** Nodes tiled so far. */
  tiled = 0;
  /** The tiling is done and held: the links are being checked. */
  linking = false;
  /** Every link checked: the tiled nodes are the linked ones. */
  done = false;
  /** The words the tiled nodes start at, a bit each. */
  readonly starts: Uint32Array;

  constructor(
    /** Words in use when the walk began. */
    readonly end: number,
    /** Nodes then. */
    readonly count: number,
  ) {
    this.starts = new Uint32Array((end + 31) >>> 5);
  }

  /** True if the level-0 link `next` (below `end`) goes nowhere or to a tiled node. */
  linkStaysIn(next: number): boolean {
    const starts = this.starts;
    return next === 0 || (next > 0 && next >>> 5 < starts.length && (starts[next >>> 5]! & (1 << (next & 31))) !== 0);
  }
}

export class SkipList {
  #buffer!: ListBuffer;
  #words!: Int32Array;
  #bytes!: Uint8Array;
  /** The same bytes as a Buffer, for memcmp of long keys. */
  #native!: Buffer;
  /** Words in use: the next node starts here. */
  #top = HEAD_WORDS;
  #count = 0;
  #height = 1;
  #random = 0x2545f491; // xorshift32 state: heights are deterministic for an insert sequence
  /** Reused by insert: the rightmost node before the insertion point at each level. */
  readonly #prev = new Int32Array(MAX_HEIGHT);
  /** The last node at each level (0: the head), so ascending inserts append without a search. */
  readonly #tails = new Int32Array(MAX_HEIGHT);

  /**
   * An empty list in a new buffer of `initialBytes` (rounded up to whole words), or in `arena`: a
   * buffer every byte of which is zero (ArenaPool.takeZeroed), of at least 1 KiB and whole words.
   */
  constructor(initialBytes = INITIAL_BYTES, arena?: ListBuffer) {
    this.#adopt(arena ?? allocate(storageBytes(initialBytes)));
    this.#words[HEIGHT] = MAX_HEIGHT;
  }

  /** Makes `buffer` the list's storage, with its views. */
  #adopt(buffer: ListBuffer): void {
    this.#buffer = buffer;
    this.#words = new Int32Array(buffer);
    this.#bytes = new Uint8Array(buffer);
    this.#native = Buffer.from(buffer);
  }

  /**
   * The list's storage, for another thread to read (a flush in a worker): a shared buffer itself,
   * which the other thread reads in place, else a copy of the bytes in use (one memcpy; the job
   * transfers it, so it is not copied again). Only for a list no one inserts into anymore, whose
   * buffer is not reused until the other thread is done with it.
   */
  exportState(): SkipListState {
    const buffer = this.#buffer instanceof ArrayBuffer ? this.#buffer.slice(0, this.#top * 4) : this.#buffer;
    return { buffer, words: this.#top, count: this.#count, height: this.#height };
  }

  /**
   * Gives up the list's storage, for another list to reuse: returns the buffer and how many bytes
   * of it are in use, and leaves this list empty (a read finds nothing; an insert starts a new
   * buffer). Only for a list no one reads or inserts into anymore.
   */
  releaseStorage(): { buffer: ListBuffer; used: number } {
    const released = { buffer: this.#buffer, used: this.#top * 4 };
    this.#adopt(allocate(HEAD_WORDS * 4));
    this.#words[HEIGHT] = MAX_HEIGHT;
    this.#top = HEAD_WORDS;
    this.#count = 0;
    this.#height = 1;
    this.#tails.fill(0);
    this.#prev.fill(0);
    return released;
  }

  /**
   * A list over exported storage (a flush's arena or copy, a memtable image), taking `state.buffer` as its
   * own. Inserts go on where the list left off (a buffer with no room left grows as any does).
   */
  static fromState(state: SkipListState): SkipList {
    const list = new SkipList(1024);
    list.#adopt(state.buffer);
    list.#top = state.words;
    list.#count = state.count;
    list.#height = state.height;
    list.#findTails();
    return list;
  }

  /** Sets #tails from the links: at each level, from the top, walk on from the level above's last node. */
  #findTails(): void {
    const words = this.#words;
    let node = 0;
    for (let level = this.#height - 1; level >= 0; level--) {
      for (let next = words[node + NEXT + level]!; next !== 0; next = words[node + NEXT + level]!) node = next;
      this.#tails[level] = node;
    }
  }

  /**
   * The list's storage in place (no copy), for writing it out (db/memtable-image.ts): `bytes` is
   * a view of the words in use, valid until the next insert.
   */
  storageView(): SkipListView {
    return { bytes: this.#bytes.subarray(0, this.#top * 4), words: this.#top, count: this.#count, height: this.#height };
  }

  /**
   * Every node's user key as `[start, end)` byte offsets in `bytes` (2 numbers per node) in storage
   * order — the order the nodes were written in, not key order: one pass through memory in
   * sequence, where following the links in key order costs a cache and TLB miss per node (a
   * deferred Bloom filter's fill of a 22,000-entry image: 6-12 ms warm that way, BENCHMARKS.md,
   * session 25). Null unless the storage is provably the linked nodes: the headers tile the words in
   * use into exactly `count` nodes, each with lengths inside the storage, and the head's and every
   * node's level-0 link goes to one of them or nowhere. With the level-0 chain known to visit
   * `count` distinct nodes (a list's own storage, or one skipListStateProblem accepted), that makes
   * the chain and the tiled nodes the same set: an image whose layout differs (a writer's bug
   * under a valid checksum) is read along its links instead, and no key is left out.
   */
  userKeyRangesInStorage(): Int32Array | null {
    const walk = this.storageWalk();
    const out = new Int32Array(2 * walk.count);
    if (this.walkStorage(walk, out, walk.count) < 0 || !walk.linking) return null;
    return this.checkStorageLinks(walk, walk.count) && walk.done ? out : null;
  }

  /** A walk of the storage as it is now, for walkStorage and checkStorageLinks. */
  storageWalk(): StorageWalk {
    return new StorageWalk(this.#top, this.#count);
  }

  /**
   * The tiling pass of `walk`: the user keys of up to `max` more nodes, as `[start, end)` byte
   * offsets in `bytes` (`ranges[2i]`, `ranges[2i + 1]`), in storage order. Returns how many, or −1
   * if the storage does not tile into the walk's `count` nodes, each with lengths inside the
   * storage. Once the last node is tiled (`walk.linking`), checkStorageLinks goes on.
   */
  walkStorage(walk: StorageWalk, ranges: Int32Array, max: number): number {
    const words = this.#words;
    const end = walk.end;
    const bytesPresent = end * 4;
    const starts = walk.starts;
    let node = walk.at;
    let tiled = walk.tiled;
    let i = 0;
    while (node < end && i < max) {
      const height = words[node + HEIGHT]!;
      const keyLen = words[node + KEY_LEN]!;
      const valueLen = words[node + VALUE_LEN]!;
      // Each length against the storage first: two near 2^31 would wrap the sum below (>>> is mod 2^32).
      if (!(height >= 1 && height <= MAX_HEIGHT && keyLen >= 0 && valueLen >= 0 && keyLen <= bytesPresent && valueLen <= bytesPresent)) return -1;
      if (++tiled > walk.count) return -1;
      const start = (node + NEXT + height) << 2;
      ranges[2 * i] = start;
      ranges[2 * i + 1] = start + keyLen;
      starts[node >>> 5]! |= 1 << (node & 31);
      i++;
      node += NEXT + height + ((keyLen + TRAILER + valueLen + 3) >>> 2);
    }
    walk.at = node;
    walk.tiled = tiled;
    if (node >= end) {
      if (node !== end || tiled !== walk.count) return -1;
      walk.at = HEAD_WORDS;
      walk.linking = true;
    }
    return i;
  }

  /**
   * The link pass of `walk` (after walkStorage tiled every node): checks the head's and up to
   * `max` more nodes' level-0 links. False if one leads (past any nodes inserted since the walk
   * began) neither nowhere nor to a tiled node; `walk.done` once every link is checked. With the
   * level-0 chain known to visit `count` distinct nodes, the chain and the tiled nodes are then
   * the same set (see userKeyRangesInStorage): inserts only splice new nodes in between.
   */
  checkStorageLinks(walk: StorageWalk, max: number): boolean {
    const words = this.#words;
    const end = walk.end;
    let node = walk.at;
    if (node === HEAD_WORDS && !walk.linkStaysIn(this.#pastInserted(words[NEXT]!, end, walk.count))) return false;
    for (let k = 0; node < end && k < max; k++) {
      if (!walk.linkStaysIn(this.#pastInserted(words[node + NEXT]!, end, walk.count))) return false;
      node += NEXT + words[node + HEIGHT]! + ((words[node + KEY_LEN]! + TRAILER + words[node + VALUE_LEN]! + 3) >>> 2);
    }
    walk.at = node;
    if (node >= end) walk.done = true;
    return true;
  }

  /**
   * Where the level-0 link `next` leads past the nodes at or after word `end` (inserted since a
   * walk of `count` nodes began): the first node before `end`, or 0; −1 for a link past the words
   * in use, or one that passes more nodes than were inserted. A linked node's path passes only
   * inserted nodes; a node the links do not reach (an image's damage that its checks let through)
   * may lead anywhere, through the bytes of the nodes inserted since, and must not loop.
   */
  #pastInserted(next: number, end: number, count: number): number {
    const words = this.#words;
    const top = this.#top;
    for (let steps = this.#count - count; next >= end; steps--) {
      if (next >= top || steps === 0) return -1;
      next = words[next + NEXT]!;
    }
    return next;
  }

  /** Entries inserted. */
  get count(): number {
    return this.#count;
  }

  /** Bytes used by nodes (headers, towers, keys and values), the head's excepted. */
  get bytesUsed(): number {
    return (this.#top - HEAD_WORDS) * 4;
  }

  /** The bytes every node lives in (for `internalKeyStart` and friends). Never written behind a node. */
  get bytes(): Uint8Array {
    return this.#bytes;
  }

  #randomHeight(): number {
    let height = 1;
    let x = this.#random;
    for (;;) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      if (height >= MAX_HEIGHT || (x >>> 0) % BRANCHING !== 0) break;
      height++;
    }
    this.#random = x;
    return height;
  }

  /** The sequence number in the trailer at byte `p`. */
  #seqAt(p: number): number {
    const b = this.#bytes;
    const lo = (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
    const hi = (b[p + 4]! | (b[p + 5]! << 8) | (b[p + 6]! << 16) | (b[p + 7]! << 24)) >>> 0;
    return hi * TWO_POW_24 + (lo >>> 8);
  }

  // The probe: the key a search compares nodes against, staged once per search (#stage). Keys up
  // to NATIVE_COMPARE_FROM bytes are copied to a word-aligned scratch, so a comparison first
  // matches whole words (a node's key starts at a word boundary too), then the bytes of the first
  // word that differs; longer keys compare with memcmp from where they lie.
  readonly #probeWords = new Int32Array(NATIVE_COMPARE_FROM >>> 2);
  readonly #probeBytes = new Uint8Array(this.#probeWords.buffer);
  #probeSrc: Uint8Array = this.#probeBytes;
  #probeOff = 0;
  #probeLen = 0;
  #probeSeq = 0;

  /** Makes user key `src[off, off + len)` at sequence `seq` the probe of the following #compare calls. */
  #stage(src: Uint8Array, off: number, len: number, seq: number): void {
    this.#probeLen = len;
    this.#probeSeq = seq;
    if (len > NATIVE_COMPARE_FROM) {
      this.#probeSrc = src;
      this.#probeOff = off;
      return;
    }
    const dst = this.#probeBytes;
    for (let i = 0; i < len; i++) dst[i] = src[off + i]!;
    this.#probeSrc = dst; // hold no caller's buffer past its search
  }

  /**
   * Compares the probe (#stage) with node `node`: < 0 if the probe sorts first. Internal-key
   * order: user key ascending, then sequence descending.
   */
  #compare(node: number): number {
    const words = this.#words;
    const nodeLen = words[node + KEY_LEN]!;
    const base = node + NEXT + words[node + HEIGHT]!;
    const at = base << 2;
    const len = this.#probeLen;
    const n = len < nodeLen ? len : nodeLen;
    let c = 0;
    if (len > NATIVE_COMPARE_FROM) {
      c = -this.#native.compare(this.#probeSrc, this.#probeOff, this.#probeOff + len, at, at + nodeLen);
    } else {
      const probe = this.#probeWords;
      const whole = n >>> 2;
      let w = 0;
      while (w < whole && probe[w] === words[base + w]) w++;
      const bytes = this.#bytes;
      const probeBytes = this.#probeBytes;
      let i = w << 2;
      while (i < n && probeBytes[i] === bytes[at + i]) i++;
      c = i < n ? probeBytes[i]! - bytes[at + i]! : len - nodeLen;
    }
    return c !== 0 ? c : this.#seqAt(at + nodeLen) - this.#probeSeq;
  }

  /** Finds the last node before the probe at every level; fills #prev when `fill`. */
  #descend(src: Uint8Array, off: number, len: number, seq: number, fill: boolean): number {
    this.#stage(src, off, len, seq);
    return this.#descendStaged(fill);
  }

  /** #descend for the probe already staged. */
  #descendStaged(fill: boolean): number {
    const words = this.#words;
    let x = 0;
    for (let level = this.#height - 1; level >= 0; level--) {
      for (;;) {
        const next = words[x + NEXT + level]!;
        if (next === 0 || this.#compare(next) <= 0) break;
        x = next;
      }
      if (fill) this.#prev[level] = x;
    }
    return x;
  }

  /**
   * Fills #prev for a probe that sorts after the previous insert, starting from that insert's
   * path (a finger search, as RocksDB's InsertWithHint): the levels whose next node still sorts
   * at or after the probe keep their predecessor, and only the levels below are searched again,
   * from the lowest kept one down. A sorted run of inserts then costs O(log gap) per entry
   * instead of O(log n).
   */
  #descendFromPrevious(): void {
    const words = this.#words;
    const prev = this.#prev;
    const height = this.#height;
    // Where the previous path is still right: the lowest level whose successor is not passed.
    // (If level l's successor is not passed, neither is any higher level's: it sorts later.)
    let kept = 0;
    while (kept < height) {
      const next = words[prev[kept]! + NEXT + kept]!;
      if (next === 0 || this.#compare(next) <= 0) break;
      kept++;
    }
    if (kept === 0) return;
    let x = prev[kept - 1]!;
    for (let level = kept - 1; level >= 0; level--) {
      for (;;) {
        const next = words[x + NEXT + level]!;
        if (next === 0 || this.#compare(next) <= 0) break;
        x = next;
      }
      prev[level] = x;
    }
  }

  /** Makes room for `words` more words, moving to a buffer twice as large (or more) if needed. */
  #reserve(words: number): void {
    const need = (this.#top + words) * 4;
    if (need <= this.#buffer.byteLength) return;
    let size = this.#buffer.byteLength * 2;
    while (size < need) size *= 2;
    const used = this.#bytes.subarray(0, this.#top * 4);
    this.#adopt(allocate(size));
    this.#bytes.set(used);
  }

  /**
   * Inserts an entry, copying `key` and `value`. Requires that no entry with the same (key, seq)
   * exists. Returns the new node.
   */
  insert(key: Uint8Array, seq: number, type: number, value: Uint8Array): number {
    return this.insertFrom(key, 0, key.length, value, 0, value.length, seq, type, false);
  }

  /**
   * Inserts the entry with user key `keySrc[keyOff, keyOff + keyLen)` and value
   * `valueSrc[valueOff, valueOff + valueLen)`, copying both (no view is made).
   * `afterPrevious`: the caller promises that this entry sorts after the one inserted just before
   * it, so the search starts from that insert's path (see #descendFromPrevious). Requires that no
   * entry with the same (key, seq) exists. Returns the new node.
   */
  insertFrom(
    keySrc: Uint8Array,
    keyOff: number,
    keyLen: number,
    valueSrc: Uint8Array,
    valueOff: number,
    valueLen: number,
    seq: number,
    type: number,
    afterPrevious: boolean,
  ): number {
    const height = this.#randomHeight();
    this.#reserve(NEXT + height + ((keyLen + TRAILER + valueLen + 3) >>> 2));
    const prev = this.#prev;
    const tails = this.#tails;
    this.#stage(keySrc, keyOff, keyLen, seq);
    if (this.#count > 0 && this.#compare(tails[0]!) > 0) {
      // After the last entry (ascending keys: sequential fills, batches): append at the tails.
      for (let level = 0; level < this.#height; level++) prev[level] = tails[level]!;
    } else if (afterPrevious && this.#count > 0) {
      this.#descendFromPrevious();
    } else {
      this.#descendStaged(true);
    }
    if (height > this.#height) {
      for (let level = this.#height; level < height; level++) prev[level] = 0;
      this.#height = height;
    }
    const node = this.#top;
    const words = this.#words;
    words[node + HEIGHT] = height;
    words[node + KEY_LEN] = keyLen;
    words[node + VALUE_LEN] = valueLen;
    const at = (node + NEXT + height) << 2;
    const bytes = this.#bytes;
    if (keyLen > NATIVE_COMPARE_FROM) bytes.set(keySrc.subarray(keyOff, keyOff + keyLen), at);
    else for (let i = 0; i < keyLen; i++) bytes[at + i] = keySrc[keyOff + i]!;
    writeTrailer(bytes, at + keyLen, seq, type as ValueType);
    if (valueLen > 0) bytes.set(valueSrc.subarray(valueOff, valueOff + valueLen), at + keyLen + TRAILER);
    this.#top = node + NEXT + height + ((keyLen + TRAILER + valueLen + 3) >>> 2);
    this.#count++;
    for (let level = 0; level < height; level++) {
      const p = prev[level]! + NEXT + level;
      words[node + NEXT + level] = words[p]!;
      words[p] = node;
      if (words[node + NEXT + level] === 0) tails[level] = node;
      // The new node is the predecessor of whatever sorts after it: the next insert's path.
      prev[level] = node;
    }
    return node;
  }

  /**
   * Loads an empty list with entries given in internal-key order, as if inserted one by one:
   * entry `order[k]` of `fields` (RUN_FIELDS per entry: type, key offset, key length, value
   * offset, value length, indexing `src`) at sequence `seqs[order[k]]`. The nodes are written in the source's
   * order (reading and writing memory in sequence) and then linked in key order, so no key is
   * compared and each entry costs one visit to its node. The caller vouches for the order
   * (entries strictly ascending in internal-key order).
   */
  loadSorted(src: Uint8Array, fields: Int32Array, seqs: Float64Array, order: Int32Array, n: number): void {
    if (this.#count !== 0) throw new Error('SkipList.loadSorted needs an empty list');
    if (n === 0) return;
    // Three loops, each a function of its own (see MemTable#entryOrder for why).
    const heights = new Uint8Array(n);
    this.#reserve(this.#drawHeights(heights, fields, n));
    const nodes = new Int32Array(n);
    this.#top = writeNodes(this.#words, this.#bytes, this.#top, src, fields, seqs, heights, nodes, n);
    for (let i = 0; i < MAX_HEIGHT; i++) this.#tails[i] = 0;
    linkNodes(this.#words, this.#tails, nodes, order, n);
    this.#count = n;
    // The next insert searches from the head (#prev is only trusted after an insert).
    this.#prev.fill(0);
  }

  /** Draws a height per entry into `heights`; returns the words the nodes take. */
  #drawHeights(heights: Uint8Array, fields: Int32Array, n: number): number {
    let words = 0;
    let tallest = this.#height;
    for (let i = 0; i < n; i++) {
      const h = this.#randomHeight();
      heights[i] = h;
      if (h > tallest) tallest = h;
      words += NEXT + h + ((fields[i * RUN_FIELDS + 2]! + TRAILER + fields[i * RUN_FIELDS + 4]! + 3) >>> 2);
    }
    this.#height = tallest;
    return words;
  }

  /** The first node at or after (key, seq) in internal order, or 0. */
  seek(key: Uint8Array, seq: number): number {
    return this.#words[this.#descend(key, 0, key.length, seq, false) + NEXT]!;
  }

  /** The last node strictly before (key, seq), or 0. */
  seekBefore(key: Uint8Array, seq: number): number {
    return this.#descend(key, 0, key.length, seq, false);
  }

  /** The last node strictly before `node`, or 0. */
  before(node: number): number {
    const start = this.internalKeyStart(node);
    const len = this.#words[node + KEY_LEN]!;
    return this.#descend(this.#bytes, start, len, this.#seqAt(start + len), false);
  }

  first(): number {
    return this.#words[NEXT]!;
  }

  last(): number {
    const words = this.#words;
    let x = 0;
    for (let level = this.#height - 1; level >= 0; level--) {
      for (;;) {
        const next = words[x + NEXT + level]!;
        if (next === 0) break;
        x = next;
      }
    }
    return x;
  }

  next(node: number): number {
    return this.#words[node + NEXT]!;
  }

  /** True if `node`'s user key equals `key`. */
  hasKey(node: number, key: Uint8Array): boolean {
    const len = this.#words[node + KEY_LEN]!;
    if (len !== key.length) return false;
    const at = this.internalKeyStart(node);
    if (len > NATIVE_COMPARE_FROM) return this.#native.compare(key, 0, len, at, at + len) === 0;
    const bytes = this.#bytes;
    for (let i = 0; i < len; i++) if (key[i] !== bytes[at + i]) return false;
    return true;
  }

  seqOf(node: number): number {
    return this.#seqAt(this.internalKeyStart(node) + this.#words[node + KEY_LEN]!);
  }

  typeOf(node: number): number {
    return this.#bytes[this.internalKeyStart(node) + this.#words[node + KEY_LEN]!]!;
  }

  /** Where `node`'s internal key (user key ‖ trailer) starts in `bytes`. */
  internalKeyStart(node: number): number {
    return (node + NEXT + this.#words[node + HEIGHT]!) << 2;
  }

  /** Where `node`'s internal key ends in `bytes`; its value starts there. */
  internalKeyEnd(node: number): number {
    return this.internalKeyStart(node) + this.#words[node + KEY_LEN]! + TRAILER;
  }

  /** Where `node`'s value ends in `bytes`. */
  valueEnd(node: number): number {
    return this.internalKeyEnd(node) + this.#words[node + VALUE_LEN]!;
  }

  /** The node's user key: a view of the list's bytes (allocates the view; bytes never change). */
  keyOf(node: number): Uint8Array {
    const at = this.internalKeyStart(node);
    return this.#bytes.subarray(at, at + this.#words[node + KEY_LEN]!);
  }

  /** The node's value: a view of the list's bytes (allocates the view; bytes never change). */
  valueOf(node: number): Uint8Array {
    const at = this.internalKeyEnd(node);
    return this.#bytes.subarray(at, at + this.#words[node + VALUE_LEN]!);
  }
}

/**
 * Writes entry i of `fields` (see SkipList#loadSorted) as a node of height `heights[i]` from word
 * `top` on, unlinked, and its index into `nodes[i]`; returns the word after the last node. The
 * words are fresh (never written): next pointers are already 0.
 */
function writeNodes(
  w: Int32Array,
  bytes: Uint8Array,
  top: number,
  src: Uint8Array,
  fields: Int32Array,
  seqs: Float64Array,
  heights: Uint8Array,
  nodes: Int32Array,
  n: number,
): number {
  for (let i = 0; i < n; i++) {
    const f = i * RUN_FIELDS;
    const keyOff = fields[f + 1]!;
    const keyLen = fields[f + 2]!;
    const valueOff = fields[f + 3]!;
    const valueLen = fields[f + 4]!;
    const h = heights[i]!;
    w[top + HEIGHT] = h;
    w[top + KEY_LEN] = keyLen;
    w[top + VALUE_LEN] = valueLen;
    const at = (top + NEXT + h) << 2;
    bytes.set(src.subarray(keyOff, keyOff + keyLen), at);
    writeTrailer(bytes, at + keyLen, seqs[i]!, fields[f] as ValueType);
    if (valueLen > 0) bytes.set(src.subarray(valueOff, valueOff + valueLen), at + keyLen + TRAILER);
    nodes[i] = top;
    top += NEXT + h + ((keyLen + TRAILER + valueLen + 3) >>> 2);
  }
  return top;
}

/** Links `nodes[order[k]]` for k ascending behind `tails` (the last node at each level). */
function linkNodes(w: Int32Array, tails: Int32Array, nodes: Int32Array, order: Int32Array, n: number): void {
  for (let k = 0; k < n; k++) {
    const node = nodes[order[k]!]!;
    const h = w[node + HEIGHT]!;
    for (let level = 0; level < h; level++) {
      w[tails[level]! + NEXT + level] = node;
      tails[level] = node;
    }
  }
}
