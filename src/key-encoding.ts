/**
 * Keys and values at the public boundary: callers pass `Uint8Array` (a `Buffer` is one) or a
 * string, encoded as UTF-8; inside, everything is bytes. Anything else is INVALID_ARGUMENT, thrown
 * before the operation touches any state.
 */
import { Buffer } from 'node:buffer';
import { invalidArgument } from './errors.js';

/** What the public API accepts as a key or value. */
export type KeyLike = Uint8Array | string;

/**
 * The bytes of `x`: the array itself (not copied: copy if you keep it while the caller may
 * mutate theirs) or a string's UTF-8 encoding. `what` names the argument in the error message.
 */
export function toBytes(x: unknown, what: string): Uint8Array {
  if (x instanceof Uint8Array) return x;
  if (typeof x === 'string') return Buffer.from(x, 'utf8');
  throw invalidArgument(`${what} must be a Uint8Array, Buffer or string, got ${describe(x)}`);
}

function describe(x: unknown): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'an array';
  if (ArrayBuffer.isView(x)) return x.constructor.name;
  return typeof x;
}
