/**
 * Point reads of many keys at one sequence number (`db.getMany`, `db.has` through Level's
 * `hasMany`). The one place the multi-key read path lives: today it looks the keys up one by one
 * in key order, so consecutive keys find the blocks their neighbours brought into the block cache
 * (and a key asked twice is looked up once); a faster path (one index seek per block, LevelDB's
 * MultiGet) replaces the loop here without changing the contract.
 *
 * Called on the database's thread with keys already checked (bytes); returns owned Buffers.
 */
import { Buffer } from 'node:buffer';
import { compareBytes } from '../format/bytes.js';
import type { DBImpl } from './db-impl.js';

/** The values of `keys` visible at `sequence`, in the order asked (undefined where absent). */
export function getMany(db: DBImpl, keys: readonly Uint8Array[], sequence: number): (Buffer | undefined)[] {
  const n = keys.length;
  const values = new Array<Buffer | undefined>(n);
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => compareBytes(keys[a]!, keys[b]!));
  let previous = -1;
  for (const i of order) {
    const key = keys[i]!;
    if (previous >= 0 && compareBytes(keys[previous]!, key) === 0) {
      const same = values[previous];
      values[i] = same === undefined ? undefined : Buffer.from(same); // each caller's copy its own
      continue;
    }
    const value = db.get(key, sequence);
    values[i] = value === undefined ? undefined : Buffer.from(value);
    previous = i;
  }
  return values;
}
