/**
 * The filter seam, after LevelDB's `filter_policy.h`.
 *
 * A FilterPolicy turns a set of user keys into a compact summary (a "filter") and later answers
 * "may this key be in the set?". Its `name` is persisted in every table's metaindex
 * (`filter.<name>`), so a name must change whenever the bytes a policy writes would be read
 * differently. A reader that meets a filter whose name it does not know, or whose bytes are
 * malformed, must treat it as "may match": a slower read, never a wrong "not found".
 *
 * Hash once, probe many: a point lookup may consult one filter per table (and several tables per
 * level 0). `newProbe()` returns a reusable probe; `probe.setKey(key)` hashes the key once and
 * `probe.mayMatch(filter, start, end)` then costs only the probes themselves. A probe is owned by
 * one caller (it is mutable state) and allocates nothing per call.
 */
export interface FilterPolicy {
  /** Persisted in table metaindex entries as `filter.<name>`: never change it for a given format. */
  readonly name: string;
  /**
   * Builds a filter over `keys` (may be empty; may hold duplicates, in any order). Returns an
   * owned buffer. Deterministic: the same keys in the same order give the same bytes.
   */
  createFilter(keys: readonly Uint8Array[]): Uint8Array;
  /**
   * True if `key` may be among the keys `filter` was built from; false only if it certainly is
   * not. A malformed filter returns true. Equivalent to `newProbe()` then `setKey` + `mayMatch`,
   * for one-off checks.
   */
  keyMayMatch(key: Uint8Array, filter: Uint8Array): boolean;
  /** A reusable probe for the hash-once path. */
  newProbe(): FilterProbe;
}

/**
 * A key hashed for one policy. Legal call order: `setKey` then any number of `mayMatch`, then
 * `setKey` again for the next key. `mayMatch` before any `setKey` answers for the empty key.
 */
export interface FilterProbe {
  /** Hashes `key` for the following `mayMatch` calls. The key bytes are not retained. */
  setKey(key: Uint8Array): void;
  /**
   * Asks the filter stored in `filter[start, end)` (default: the whole buffer) about the key of
   * the last `setKey`. Malformed or empty-range filters follow the policy's documented rule;
   * a malformed filter always answers true.
   */
  mayMatch(filter: Uint8Array, start?: number, end?: number): boolean;
}
