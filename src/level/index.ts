/**
 * The door of `sievekv/level`: sievekv as an abstract-level database (Level's API), for code
 * written against `level` / `classic-level`. Everything public of the subpath is named here.
 */
export { SieveLevel } from './sieve-level.js';
export type { SieveLevelOptions } from './sieve-level.js';
export type { SieveSnapshot } from './sieve-snapshot.js';
