/**
 * A database directory's files as the recovery tools (repair, verify, destroy) find them, without
 * opening the database: the REGIONS file of a sharded database, and every file sievekv (or
 * LevelDB) names, in the directory and in each region's sub-directory.
 *
 * Layout (db-impl.ts, region.ts): CURRENT, MANIFEST-*, the WALs (`NNNNNN.log`), LOCK, LOG and
 * REGIONS live in the database directory; region 0's tables too, region i's tables in
 * `region-<i>/`. File numbers are unique across regions (one counter). Read-only; every call
 * goes through the FileSystem seam.
 */
import { TextDecoder } from 'node:util';
import { join } from 'node:path';
import type { FileSystem } from '../fs/file-system.js';
import { FileType, parseFileName } from '../version/filenames.js';
import { regionDir } from './region.js';

/** The file that names a sharded database's router (`<name>\n<regions>\n`); a plain one has none. */
export const REGIONS_FILE = 'REGIONS';

/** What REGIONS says, or why it cannot be read. */
export type RegionsInfo =
  | { readonly kind: 'plain' }
  | { readonly kind: 'sharded'; readonly routerName: string; readonly count: number }
  | { readonly kind: 'damaged'; readonly reason: string };

/** Reads `dir/REGIONS`: absent is a plain database. */
export function readRegions(fs: FileSystem, dir: string): RegionsInfo {
  const path = join(dir, REGIONS_FILE);
  if (!fs.exists(path)) return { kind: 'plain' };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(fs.readFile(path));
  } catch (err) {
    return { kind: 'damaged', reason: `unreadable: ${(err as Error).message}` };
  }
  const m = /^([^\n]+)\n(\d+)\n$/.exec(text);
  const count = m === null ? NaN : Number(m[2]);
  if (m === null || !Number.isInteger(count) || count < 1 || count > 1024) {
    return { kind: 'damaged', reason: `not "<router name>\\n<region count>\\n": ${JSON.stringify(text.slice(0, 60))}` };
  }
  return { kind: 'sharded', routerName: m[1]!, count };
}

/** Region indexes i ≥ 1 for which a `region-<i>` sub-directory exists. */
export function regionDirsOnDisk(fs: FileSystem, dir: string): number[] {
  const found: number[] = [];
  for (const name of fs.list(dir)) {
    const m = /^region-(\d+)$/.exec(name);
    if (m !== null && Number(m[1]) >= 1 && String(Number(m[1])) === m[1]) found.push(Number(m[1]));
  }
  return found.sort((a, b) => a - b);
}

/** One file of the database, by name. */
export interface DatabaseFile {
  readonly region: number;
  /** The directory it is in (the database's or its region's). */
  readonly dir: string;
  readonly name: string;
  readonly path: string;
  readonly type: FileType;
  readonly number: number;
}

/**
 * Every file with a database name in `dir` (region 0) and in the sub-directories of regions
 * 1..regions-1 that exist. Names that are not sievekv's (or LevelDB's) are left out; so are
 * sub-directories such as `lost/`.
 */
export function listDatabaseFiles(fs: FileSystem, dir: string, regions: number): DatabaseFile[] {
  const out: DatabaseFile[] = [];
  for (let region = 0; region < regions; region++) {
    const d = regionDir(dir, region);
    if (region > 0 && !fs.exists(d)) continue;
    for (const name of fs.list(d).sort()) {
      const parsed = parseFileName(name);
      if (parsed === undefined) continue;
      out.push({ region, dir: d, name, path: join(d, name), type: parsed.type, number: parsed.number });
    }
  }
  return out;
}
