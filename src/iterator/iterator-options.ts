/**
 * The options of `db.iterator(options)` that shape the view (range, direction, count), validated
 * in one place before the database pins anything. The `snapshot` option belongs to the database
 * (it picks the sequence number) and is passed over here; any other unknown property is
 * INVALID_ARGUMENT (a misspelt `lte` would otherwise widen the range silently).
 */
import { invalidArgument } from '../errors.js';
import { toBytes } from '../key-encoding.js';

/** A bound as the public API takes it: bytes, or a string (UTF-8). */
export type IteratorBound = Uint8Array | string;

/** Range and direction options of `db.iterator()`. Keys compare bytewise (strings as UTF-8). */
export interface IteratorRangeOptions {
  /** Only keys greater than this (ignored when `gte` is given too, as in Level). */
  gt?: IteratorBound;
  /** Only keys greater than or equal to this. */
  gte?: IteratorBound;
  /** Only keys less than this (ignored when `lte` is given too, as in Level). */
  lt?: IteratorBound;
  /** Only keys less than or equal to this. */
  lte?: IteratorBound;
  /**
   * Yield keys in descending order.
   * @defaultValue false
   */
  reverse?: boolean;
  /**
   * Yield at most this many entries: a non-negative integer, `Infinity`, or -1 (no limit, as in
   * abstract-level).
   * @defaultValue Infinity
   */
  limit?: number;
  /**
   * With `false`, every entry's value is an empty Buffer and the values are never copied (a key
   * scan; `db.clear` walks keys this way).
   * @defaultValue true
   */
  values?: boolean;
  /**
   * With `false`, each entry's key and value are views of the iterator's own buffers instead of
   * copies: valid only until the iterator's next call (`next`, `nextv`, `seek`, `close`). Copy
   * what you keep. Saves two copies per entry on a scan.
   * @defaultValue true
   */
  copy?: boolean;
}

/** Validated options: bounds as owned byte copies. */
export interface ResolvedIteratorOptions {
  /** The lower bound, or null for none; `lowerInclusive` tells gte from gt. */
  readonly lower: Uint8Array | null;
  readonly lowerInclusive: boolean;
  /** The upper bound, or null for none; `upperInclusive` tells lte from lt. */
  readonly upper: Uint8Array | null;
  readonly upperInclusive: boolean;
  readonly reverse: boolean;
  /** Infinity when unlimited. */
  readonly limit: number;
  /** False for a key scan: values are neither copied nor returned. */
  readonly values: boolean;
  /** False: entries are views, valid until the next call. */
  readonly copy: boolean;
}

const KNOWN = new Set(['gt', 'gte', 'lt', 'lte', 'reverse', 'limit', 'values', 'copy', 'snapshot']);

/** The options of `db.iterator()` without any: one frozen object for every such iterator. */
const DEFAULTS: ResolvedIteratorOptions = Object.freeze({
  lower: null,
  lowerInclusive: true,
  upper: null,
  upperInclusive: true,
  reverse: false,
  limit: Infinity,
  values: true,
  copy: true,
});

/**
 * True if `o` sets no option (`{}`): no enumerable property, own or inherited (a loop that makes
 * no array, unlike `Object.keys`), and none of the options' names readable either (a
 * non-enumerable one is read below like any other).
 */
function noOptions(o: IteratorRangeOptions): boolean {
  for (const _ in o) return false;
  return (
    o.gt === undefined && o.gte === undefined && o.lt === undefined && o.lte === undefined &&
    o.reverse === undefined && o.limit === undefined && o.values === undefined && o.copy === undefined
  );
}

/**
 * Validates `options` (undefined means all defaults) and copies the bounds (the caller may reuse
 * its buffers). Given both, `gte` wins over `gt` and `lte` over `lt` (Level's rule; the loser is
 * still type-checked). Bad types or a bad `limit`: INVALID_ARGUMENT. An empty range (lower above
 * upper) is valid and yields nothing.
 */
export function resolveIteratorOptions(options: unknown): ResolvedIteratorOptions {
  if (options === undefined) return DEFAULTS;
  if (options === null || typeof options !== 'object') {
    throw invalidArgument(`iterator options must be an object, got ${options === null ? 'null' : typeof options}`);
  }
  // `db.iterator()` passes `{}`: a seek-and-read-one loop makes one iterator per seek.
  if (noOptions(options as IteratorRangeOptions)) return DEFAULTS;
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw invalidArgument(`unknown iterator option ${key}`);
  }
  const o = options as IteratorRangeOptions;
  const gt = o.gt === undefined ? null : bound(o.gt, 'gt');
  const gte = o.gte === undefined ? null : bound(o.gte, 'gte');
  const lt = o.lt === undefined ? null : bound(o.lt, 'lt');
  const lte = o.lte === undefined ? null : bound(o.lte, 'lte');
  const reverse = flag(o.reverse, 'reverse', false);
  return {
    lower: gte ?? gt,
    lowerInclusive: gte !== null || gt === null,
    upper: lte ?? lt,
    upperInclusive: lte !== null || lt === null,
    reverse,
    limit: resolveLimit(o.limit),
    values: flag(o.values, 'values', true),
    copy: flag(o.copy, 'copy', true),
  };
}

function bound(x: unknown, name: string): Uint8Array {
  return new Uint8Array(toBytes(x, `iterator option ${name}`)); // an owned copy
}

function flag(x: unknown, name: string, fallback: boolean): boolean {
  if (x === undefined) return fallback;
  if (typeof x !== 'boolean') throw invalidArgument(`iterator option ${name} must be a boolean, got ${typeof x}`);
  return x;
}

function resolveLimit(limit: unknown): number {
  if (limit === undefined || limit === Infinity || limit === -1) return Infinity;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 0) {
    throw invalidArgument(`iterator option limit must be a non-negative integer, Infinity or -1, got ${String(limit)}`);
  }
  return limit;
}
