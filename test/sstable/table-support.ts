/**
 * Shared helpers of the table tests (not a test file): every FilterPolicy in src/filter, a
 * sorted-entry model of a table, and building a table into a MemFileSystem.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FilterPolicy } from '../../src/filter/policy.js';
import { bytewiseComparator } from '../../src/format/comparator.js';
import { bytewiseInternalComparator } from '../../src/format/internal-key-comparator.js';
import { encodeInternalKey, MAX_SEQUENCE, ValueType } from '../../src/format/internal-key.js';
import { KeyProbes } from '../../src/filter/key-probes.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { TableBuilder, type TableBuilderOptions } from '../../src/sstable/table-builder.js';
import type { TableProperties } from '../../src/sstable/table-properties.js';
import { GetStatus, type Table, TableGetResult } from '../../src/sstable/table.js';

export interface Entry {
  userKey: Uint8Array;
  seq: number;
  type: ValueType;
  key: Uint8Array; // internal key
  value: Uint8Array;
}

export interface PolicyMaker {
  label: string;
  make(bitsPerKey: number): FilterPolicy;
}

/**
 * Every class exported from src/filter whose instances are FilterPolicies (a `createFilter` and a
 * `newProbe` on the prototype), constructed as `new C(bitsPerKey)`: a policy added there joins
 * the table tests without editing them.
 */
export async function discoverFilterPolicies(): Promise<PolicyMaker[]> {
  const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'filter');
  const makers: PolicyMaker[] = [];
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.ts')) continue;
    const mod = (await import(pathToFileURL(join(dir, file)).href)) as Record<string, unknown>;
    for (const [exportName, value] of Object.entries(mod)) {
      if (typeof value !== 'function') continue;
      const proto = (value as { prototype?: Record<string, unknown> }).prototype;
      if (typeof proto?.createFilter !== 'function' || typeof proto?.newProbe !== 'function') continue;
      const ctor = value as new (bitsPerKey: number) => FilterPolicy;
      makers.push({ label: exportName, make: (bits) => new ctor(bits) });
    }
  }
  return makers;
}

export function internalCompare(a: Uint8Array, b: Uint8Array): number {
  return bytewiseInternalComparator.compare(a, 0, a.length, b, 0, b.length);
}

export function userCompare(a: Uint8Array, b: Uint8Array): number {
  return bytewiseComparator.compare(a, 0, a.length, b, 0, b.length);
}

export function makeEntry(userKey: Uint8Array, seq: number, type: ValueType, value: Uint8Array): Entry {
  return { userKey, seq, type, key: encodeInternalKey(userKey, seq, type), value };
}

/** Sorts entries in table order (user key ascending, sequence descending). */
export function sortEntries(entries: Entry[]): Entry[] {
  return entries.sort((a, b) => internalCompare(a.key, b.key));
}

/** The model's answer to a seek: index of the first entry ≥ target, or entries.length. */
export function lowerBound(entries: readonly Entry[], target: Uint8Array): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (internalCompare(entries[mid]!.key, target) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The model's answer to `Table.get(userKey at seq)`: the entry, or undefined for NOT_FOUND. */
export function modelGet(entries: readonly Entry[], userKey: Uint8Array, seq: number): Entry | undefined {
  const i = lowerBound(entries, encodeInternalKey(userKey, seq, ValueType.VALUE));
  const e = entries[i];
  return e !== undefined && userCompare(e.userKey, userKey) === 0 ? e : undefined;
}

/** Builds a table of `entries` (already sorted) at `path` in `fs`; returns its properties. */
export function buildTable(
  fs: MemFileSystem,
  path: string,
  entries: readonly Entry[],
  options: TableBuilderOptions,
): TableProperties {
  const file = fs.createWritable(path);
  const builder = new TableBuilder(file, options);
  for (const e of entries) builder.add(e.key, e.value);
  const props = builder.finish();
  file.sync();
  file.close();
  return props;
}

export function newMemFs(dir = '/db'): MemFileSystem {
  const fs = new MemFileSystem();
  fs.mkdir(dir);
  return fs;
}

export const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
export const fromHex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));

/** A point lookup of `userKey` at the newest sequence, as text: `found <value hex>`, `deleted` or `absent`. */
export function lookup(table: Table, userKey: Uint8Array): string {
  const probes = new KeyProbes();
  probes.reset(userKey);
  const result = new TableGetResult();
  const status = table.get(encodeInternalKey(userKey, MAX_SEQUENCE, ValueType.VALUE), userKey, probes, result);
  return status === GetStatus.FOUND ? `found ${hex(result.value)}` : status === GetStatus.DELETED ? 'deleted' : 'absent';
}
