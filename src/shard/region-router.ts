/**
 * The region router seam: which region (a whole LSM tree in its own sub-directory) holds a key.
 * Decisions only — no I/O, no state that changes — so a router is tested with plain tables of
 * cases. The `name` is persisted in the database (file REGIONS) and a reopen with another router
 * is refused, since the same key would then be looked for in the wrong region.
 */
export interface RegionRouter {
  /** Persisted: identifies the routing function and its parameters. */
  readonly name: string;
  /** The region numbers, 0..n-1. */
  readonly regions: readonly number[];
  /** The region of `key`; must be deterministic and in `regions`. */
  regionOf(key: Uint8Array): number;
}

/** The router of a plain (unsharded) database: one region, 0. Writes no REGIONS file. */
export const singleRegionRouter: RegionRouter = Object.freeze({
  name: 'sievekv.single',
  regions: Object.freeze([0]),
  regionOf: (): number => 0,
});
