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
  /** Only keys greater than this. At most one of `gt`/`gte`. */
  gt?: IteratorBound;
  /** Only keys greater than or equal to this. */
  gte?: IteratorBound;
  /** Only keys less than this. At most one of `lt`/`lte`. */
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
}

const KNOWN = new Set(['gt', 'gte', 'lt', 'lte', 'reverse', 'limit', 'snapshot']);

/**
 * Validates `options` (undefined means all defaults) and copies the bounds (the caller may reuse
 * its buffers). Bad types, both `gt` and `gte`, both `lt` and `lte`, a bad `limit`:
 * INVALID_ARGUMENT. An empty range (lower above upper) is valid and yields nothing.
 */
export function resolveIteratorOptions(options: unknown): ResolvedIteratorOptions {
  if (options === undefined) {
    return { lower: null, lowerInclusive: true, upper: null, upperInclusive: true, reverse: false, limit: Infinity };
  }
  if (options === null || typeof options !== 'object') {
    throw invalidArgument(`iterator options must be an object, got ${options === null ? 'null' : typeof options}`);
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw invalidArgument(`unknown iterator option ${key}`);
  }
  const o = options as IteratorRangeOptions;
  if (o.gt !== undefined && o.gte !== undefined) throw invalidArgument('iterator options: give gt or gte, not both');
  if (o.lt !== undefined && o.lte !== undefined) throw invalidArgument('iterator options: give lt or lte, not both');
  const lower = o.gte !== undefined ? bound(o.gte, 'gte') : o.gt !== undefined ? bound(o.gt, 'gt') : null;
  const upper = o.lte !== undefined ? bound(o.lte, 'lte') : o.lt !== undefined ? bound(o.lt, 'lt') : null;
  const reverse = o.reverse ?? false;
  if (typeof reverse !== 'boolean') throw invalidArgument(`iterator option reverse must be a boolean, got ${typeof reverse}`);
  return {
    lower,
    lowerInclusive: o.gt === undefined,
    upper,
    upperInclusive: o.lt === undefined,
    reverse,
    limit: resolveLimit(o.limit),
  };
}

function bound(x: unknown, name: string): Uint8Array {
  return new Uint8Array(toBytes(x, `iterator option ${name}`)); // an owned copy
}

function resolveLimit(limit: unknown): number {
  if (limit === undefined || limit === Infinity || limit === -1) return Infinity;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 0) {
    throw invalidArgument(`iterator option limit must be a non-negative integer, Infinity or -1, got ${String(limit)}`);
  }
  return limit;
}
