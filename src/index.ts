/**
 * The one public door of sievekv: every export is named here; nothing else is public.
 */
export { SieveError, ErrorCode, isSieveError } from './errors.js';
export type { SieveErrorDetails } from './errors.js';
export type { FilterPolicy, FilterProbe } from './filter/policy.js';
export { levelDBHash } from './filter/leveldb-hash.js';
