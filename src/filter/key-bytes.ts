/**
 * Keys at the public boundary of the standalone filters (`BloomFilter`, `HyperLogLog`): a
 * `Uint8Array` is hashed as is; a string is hashed as its UTF-8 encoding (what `TextEncoder` and
 * `Buffer.from(s)` produce, lone surrogates becoming U+FFFD), so `add('é')` and
 * `add(Buffer.from('é'))` are the same key.
 *
 * Strings are encoded into one shared scratch buffer, never a fresh allocation per call: ASCII
 * by a plain loop, anything else by `TextEncoder.encodeInto`. The scratch bytes are borrowed —
 * valid until the next call into this module — so callers hash them at once and keep nothing.
 */

import { TextEncoder } from 'node:util';

const encoder = new TextEncoder();
let scratch = new Uint8Array(256);

/**
 * UTF-8 encodes `s` into the scratch buffer (see {@link utf8Scratch}) and returns the number of
 * bytes written, which start at offset 0.
 */
export function encodeUtf8ToScratch(s: string): number {
  const n = s.length;
  // A UTF-16 code unit becomes at most 3 UTF-8 bytes (a surrogate pair: 4 bytes for 2 units).
  if (scratch.length < n * 3) scratch = new Uint8Array(Math.max(n * 3, scratch.length * 2));
  const out = scratch;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return encoder.encodeInto(s, out).written;
    out[i] = c;
  }
  return n;
}

/** The scratch buffer the last {@link encodeUtf8ToScratch} wrote into. Borrowed. */
export function utf8Scratch(): Uint8Array {
  return scratch;
}

/** Throws the TypeError every standalone filter gives for a key that is neither bytes nor text. */
export function badKey(key: unknown): TypeError {
  return new TypeError(`key must be a Uint8Array or a string, got ${key === null ? 'null' : typeof key}`);
}
