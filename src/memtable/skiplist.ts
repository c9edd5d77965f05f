/**
 * The memtable's ordered index: a skiplist (Pugh 1990, after LevelDB's db/skiplist.h) of entries
 * in internal-key order — user key ascending (bytewise), then sequence number descending.
 *
 * Layout, for V8: no object per entry. Each node is a fixed 64-byte record in one Int32Array
 * (key offset and length, value length, type, height, and its tower of next pointers), and the
 * key and value bytes sit side by side in one arena Buffer. A search step then touches one record
 * (a cache line that also holds the next tower it will follow) and the key bytes, instead of a
 * node object, a pointer array, a view object and its backing store; and the garbage collector
 * never sees the entries. Sequence numbers (up to 2^53) live in a Float64Array, read only on a
 * user-key tie. Node 0 is the head; 0 as a pointer means "none".
 *
 * Insert-only: nothing is removed, so node indexes stay valid for the list's lifetime and bytes
 * returned by `keyOf`/`valueOf` are never overwritten (a grown arena is a new buffer; old views
 * keep the old one alive). Single-threaded: owned by the database's JavaScript thread.
 *
 * Invariant: no two entries have the same (user key, sequence) — every write has its own
 * sequence number, so insertion order never decides ties.
 */

/** Tallest tower. With branching 4, 10 levels serve 4^10 ≈ 1M entries at full speed. */
const MAX_HEIGHT = 10;
/** One in BRANCHING nodes of height h also reaches h + 1. */
const BRANCHING = 4;

// Node record layout, in int32 slots. 16 slots = 64 bytes = one cache line.
const RECORD = 16;
const KEY_OFF = 0;
const KEY_LEN = 1;
const VALUE_LEN = 2;
const TYPE = 3;
const HEIGHT = 4;
const NEXT = 6; // NEXT + level, level < MAX_HEIGHT

/** Keys longer than this compare with memcmp (Buffer#compare); shorter ones with a JS loop. */
const NATIVE_COMPARE_FROM = 32;
const INITIAL_NODES = 1024;
const INITIAL_ARENA = 64 * 1024;

/** A skiplist's storage as plain arrays (structured-cloneable). */
export interface SkipListState {
  nodes: Int32Array;
  seqs: Float64Array;
  arena: Uint8Array;
  count: number;
  height: number;
}

export class SkipList {
  #nodes: Int32Array = new Int32Array(INITIAL_NODES * RECORD);
  #seqs: Float64Array = new Float64Array(INITIAL_NODES);
  #arena: Buffer;
  #arenaUsed = 0;
  #count = 0; // entries; node i (1-based) is the i-th inserted
  #height = 1;
  #random = 0x2545f491; // xorshift32 state: heights are deterministic for an insert sequence
  /** Reused by insert: the rightmost node before the insertion point at each level. */
  readonly #prev = new Int32Array(MAX_HEIGHT);
  /** The last node at each level (0: the head), so ascending inserts append without a search. */
  readonly #tails = new Int32Array(MAX_HEIGHT);

  constructor(initialArenaBytes = INITIAL_ARENA) {
    this.#arena = Buffer.alloc(Math.max(256, initialArenaBytes));
    this.#nodes[HEIGHT] = MAX_HEIGHT;
  }

  /**
   * The list's storage, trimmed to what is used, for another thread to read (e.g. a flush in a
   * worker): the arrays are copies, safe to transfer. Only for a list no one inserts into anymore.
   */
  exportState(): SkipListState {
    return {
      nodes: this.#nodes.slice(0, (this.#count + 1) * RECORD),
      seqs: this.#seqs.slice(0, this.#count + 1),
      arena: new Uint8Array(this.#arena.subarray(0, this.#arenaUsed)),
      count: this.#count,
      height: this.#height,
    };
  }

  /** A read-only list over exported storage (inserting into it is not supported). */
  static fromState(state: SkipListState): SkipList {
    const list = new SkipList(256);
    list.#nodes = state.nodes;
    list.#seqs = state.seqs;
    list.#arena = Buffer.from(state.arena.buffer, state.arena.byteOffset, state.arena.byteLength);
    list.#arenaUsed = state.arena.byteLength;
    list.#count = state.count;
    list.#height = state.height;
    // Read-only: #tails is never used (insert is not supported on exported storage).
    return list;
  }

  /** Entries inserted. */
  get count(): number {
    return this.#count;
  }

  /** Arena bytes used by keys and values. */
  get arenaBytes(): number {
    return this.#arenaUsed;
  }

  /** Bytes held by node records and sequence numbers. */
  get indexBytes(): number {
    return this.#count * (RECORD * 4 + 8);
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

  /**
   * Compares the probe — user key `src[off, off + len)` at sequence `seq` — with node `node`: < 0
   * if the probe sorts first. Internal-key order: user key ascending, then sequence descending.
   */
  #compare(src: Uint8Array, off: number, len: number, seq: number, node: number): number {
    const nodes = this.#nodes;
    const base = node * RECORD;
    const nodeOff = nodes[base + KEY_OFF]!;
    const nodeLen = nodes[base + KEY_LEN]!;
    const arena = this.#arena;
    const n = len < nodeLen ? len : nodeLen;
    let c = 0;
    if (n > NATIVE_COMPARE_FROM) {
      c = -arena.compare(src, off, off + len, nodeOff, nodeOff + nodeLen);
    } else {
      let i = 0;
      while (i < n && src[off + i] === arena[nodeOff + i]) i++;
      c = i < n ? src[off + i]! - arena[nodeOff + i]! : len - nodeLen;
    }
    return c !== 0 ? c : this.#seqs[node]! - seq;
  }

  /** Finds the last node before the probe at every level; fills #prev when `fill`. */
  #descend(src: Uint8Array, off: number, len: number, seq: number, fill: boolean): number {
    const nodes = this.#nodes;
    let x = 0;
    for (let level = this.#height - 1; level >= 0; level--) {
      for (;;) {
        const next = nodes[x * RECORD + NEXT + level]!;
        if (next === 0 || this.#compare(src, off, len, seq, next) <= 0) break;
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
  #descendFromPrevious(src: Uint8Array, off: number, len: number, seq: number): void {
    const nodes = this.#nodes;
    const prev = this.#prev;
    const height = this.#height;
    // Where the previous path is still right: the lowest level whose successor is not passed.
    // (If level l's successor is not passed, neither is any higher level's: it sorts later.)
    let kept = 0;
    while (kept < height) {
      const next = nodes[prev[kept]! * RECORD + NEXT + kept]!;
      if (next === 0 || this.#compare(src, off, len, seq, next) <= 0) break;
      kept++;
    }
    if (kept === 0) return;
    let x = prev[kept - 1]!;
    for (let level = kept - 1; level >= 0; level--) {
      for (;;) {
        const next = nodes[x * RECORD + NEXT + level]!;
        if (next === 0 || this.#compare(src, off, len, seq, next) <= 0) break;
        x = next;
      }
      prev[level] = x;
    }
  }

  #reserve(arenaBytes: number): void {
    if (this.#arenaUsed + arenaBytes > this.#arena.length) {
      let size = this.#arena.length * 2;
      while (size < this.#arenaUsed + arenaBytes) size *= 2;
      const grown = Buffer.alloc(size);
      grown.set(this.#arena.subarray(0, this.#arenaUsed));
      this.#arena = grown;
    }
    if ((this.#count + 2) * RECORD > this.#nodes.length) {
      const nodes = new Int32Array(this.#nodes.length * 2);
      nodes.set(this.#nodes);
      this.#nodes = nodes;
      const seqs = new Float64Array(this.#seqs.length * 2);
      seqs.set(this.#seqs);
      this.#seqs = seqs;
    }
  }

  /**
   * Inserts an entry, copying `key` and `value` into the arena. Requires that no entry with the
   * same (key, seq) exists. Returns the new node.
   */
  insert(key: Uint8Array, seq: number, type: number, value: Uint8Array): number {
    return this.insertFrom(key, 0, key.length, value, 0, value.length, seq, type, false);
  }

  /**
   * Inserts the entry with user key `keySrc[keyOff, keyOff + keyLen)` and value
   * `valueSrc[valueOff, valueOff + valueLen)`, copying both into the arena (no view is made).
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
    this.#reserve(keyLen + valueLen);
    const prev = this.#prev;
    const tails = this.#tails;
    if (this.#count > 0 && this.#compare(keySrc, keyOff, keyLen, seq, tails[0]!) > 0) {
      // After the last entry (ascending keys: sequential fills, batches): append at the tails.
      for (let level = 0; level < this.#height; level++) prev[level] = tails[level]!;
    } else if (afterPrevious && this.#count > 0) {
      this.#descendFromPrevious(keySrc, keyOff, keyLen, seq);
    } else {
      this.#descend(keySrc, keyOff, keyLen, seq, true);
    }
    const height = this.#randomHeight();
    if (height > this.#height) {
      for (let level = this.#height; level < height; level++) prev[level] = 0;
      this.#height = height;
    }
    const node = ++this.#count;
    const nodes = this.#nodes;
    const base = node * RECORD;
    const off = this.#arenaUsed;
    const arena = this.#arena;
    if (keyLen > NATIVE_COMPARE_FROM) arena.set(keySrc.subarray(keyOff, keyOff + keyLen), off);
    else for (let i = 0; i < keyLen; i++) arena[off + i] = keySrc[keyOff + i]!;
    arena.set(valueSrc.subarray(valueOff, valueOff + valueLen), off + keyLen);
    this.#arenaUsed = off + keyLen + valueLen;
    nodes[base + KEY_OFF] = off;
    nodes[base + KEY_LEN] = keyLen;
    nodes[base + VALUE_LEN] = valueLen;
    nodes[base + TYPE] = type;
    nodes[base + HEIGHT] = height;
    this.#seqs[node] = seq;
    for (let level = 0; level < height; level++) {
      const p = prev[level]! * RECORD + NEXT + level;
      nodes[base + NEXT + level] = nodes[p]!;
      nodes[p] = node;
      if (nodes[base + NEXT + level] === 0) tails[level] = node;
      // The new node is the predecessor of whatever sorts after it: the next insert's path.
      prev[level] = node;
    }
    return node;
  }

  /** The first node at or after (key, seq) in internal order, or 0. */
  seek(key: Uint8Array, seq: number): number {
    return this.#nodes[this.#descend(key, 0, key.length, seq, false) * RECORD + NEXT]!;
  }

  /** The last node strictly before (key, seq), or 0. */
  seekBefore(key: Uint8Array, seq: number): number {
    return this.#descend(key, 0, key.length, seq, false);
  }

  /** The last node strictly before `node`, or 0. */
  before(node: number): number {
    const base = node * RECORD;
    return this.#descend(this.#arena, this.#nodes[base + KEY_OFF]!, this.#nodes[base + KEY_LEN]!, this.#seqs[node]!, false);
  }

  first(): number {
    return this.#nodes[NEXT]!;
  }

  last(): number {
    const nodes = this.#nodes;
    let x = 0;
    for (let level = this.#height - 1; level >= 0; level--) {
      for (;;) {
        const next = nodes[x * RECORD + NEXT + level]!;
        if (next === 0) break;
        x = next;
      }
    }
    return x;
  }

  next(node: number): number {
    return this.#nodes[node * RECORD + NEXT]!;
  }

  /** True if `node`'s user key equals `key`. */
  hasKey(node: number, key: Uint8Array): boolean {
    const base = node * RECORD;
    const len = this.#nodes[base + KEY_LEN]!;
    if (len !== key.length) return false;
    const off = this.#nodes[base + KEY_OFF]!;
    const arena = this.#arena;
    if (len > NATIVE_COMPARE_FROM) return arena.compare(key, 0, len, off, off + len) === 0;
    for (let i = 0; i < len; i++) if (key[i] !== arena[off + i]) return false;
    return true;
  }

  seqOf(node: number): number {
    return this.#seqs[node]!;
  }

  typeOf(node: number): number {
    return this.#nodes[node * RECORD + TYPE]!;
  }

  /** The node's user key: a view into the arena (allocates the view; bytes never change). */
  keyOf(node: number): Uint8Array {
    const base = node * RECORD;
    const off = this.#nodes[base + KEY_OFF]!;
    return this.#arena.subarray(off, off + this.#nodes[base + KEY_LEN]!);
  }

  /** The node's value: a view into the arena (allocates the view; bytes never change). */
  valueOf(node: number): Uint8Array {
    const base = node * RECORD;
    const off = this.#nodes[base + KEY_OFF]! + this.#nodes[base + KEY_LEN]!;
    return this.#arena.subarray(off, off + this.#nodes[base + VALUE_LEN]!);
  }
}
