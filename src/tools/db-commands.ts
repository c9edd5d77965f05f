/**
 * The CLI commands that go through the public `DB`: `get`, `scan`, `stats`, `compact`. Each
 * opens the database with `createIfMissing: false` (a mistyped directory is an error, not a new
 * empty database), does its work and closes it, on every path. Opening takes the directory's
 * lock and, as LevelDB's tools do, may write (recovery turns the WAL into a level-0 table and
 * starts a new MANIFEST), so these commands need a directory no other process has open.
 */
import { DB } from '../db.js';
import type { FileSystem } from '../fs/file-system.js';
import { NUM_LEVELS } from '../version/version-edit.js';
import { currentFileName } from '../version/filenames.js';
import type { IteratorRangeOptions } from '../iterator/iterator-options.js';
import { CliError } from './error-text.js';
import { printableText, showBytes, toHex } from './format-bytes.js';
import type { LineWriter } from './output.js';

/** Opens the database in `dir`, or throws a one-line error saying why there is none. */
async function openExisting(fs: FileSystem, dir: string): Promise<DB> {
  if (!fs.exists(dir)) throw new CliError(`cannot open ${dir}: no such directory`);
  if (!fs.exists(currentFileName(dir))) throw new CliError(`${dir} holds no database (no CURRENT file)`);
  return DB.open(dir, { createIfMissing: false, fs });
}

async function withDB<T>(fs: FileSystem, dir: string, work: (db: DB) => Promise<T> | T): Promise<T> {
  const db = await openExisting(fs, dir);
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

/**
 * `get DIR KEY`: the value on stdout — as text when it is printable, else `0x` + hex; with
 * `hex`, KEY is read as hex and the value printed as bare hex. Exit 1 (and a stderr line) when
 * the key is absent.
 */
export async function runGet(fs: FileSystem, dir: string, key: Uint8Array, hex: boolean, out: LineWriter, err: (line: string) => void): Promise<number> {
  const value = await withDB(fs, dir, (db) => db.getSync(key));
  if (value === undefined) {
    err(`key not found: ${hex ? toHex(key) : showBytes(key)}`);
    return 1;
  }
  if (hex) out.line(toHex(value));
  else out.line(printableText(value) ?? `0x${toHex(value)}`);
  return 0;
}

export interface ScanOptions {
  range: IteratorRangeOptions;
  json: boolean;
  hex: boolean;
}

/**
 * `scan DIR`: entries in key order (or reverse) within the bounds, at most `limit`. Text lines
 * `KEY => VALUE` (showBytes, or bare hex with `hex`); JSON Lines `{"key":"<hex>","value":"<hex>"}`
 * (the fixtures' expected.jsonl format).
 */
export async function runScan(fs: FileSystem, dir: string, options: ScanOptions, out: LineWriter): Promise<number> {
  await withDB(fs, dir, (db) => {
    const it = db.iterator(options.range);
    try {
      for (const [k, v] of it) {
        if (options.json) out.line(`{"key":"${toHex(k)}","value":"${toHex(v)}"}`);
        else if (options.hex) out.line(`${toHex(k)} => ${toHex(v)}`);
        else out.line(`${showBytes(k)} => ${showBytes(v)}`);
      }
    } finally {
      it.close();
    }
  });
  return 0;
}

interface LevelFigure {
  level: number;
  files: number;
  bytes: number;
}

function levelFigures(db: DB): LevelFigure[] {
  const stats = JSON.parse(db.getProperty('sievekv.stats') ?? '{}') as { levels?: { level: number; bytes: number }[] };
  const out: LevelFigure[] = [];
  for (let level = 0; level < NUM_LEVELS; level++) {
    const files = Number(db.getProperty(`sievekv.num-files-at-level${level}`) ?? 0);
    const bytes = stats.levels?.find((l) => l.level === level)?.bytes ?? 0;
    out.push({ level, files, bytes });
  }
  return out;
}

function writeLevels(levels: readonly LevelFigure[], out: LineWriter): void {
  for (const l of levels) {
    if (l.files > 0) out.line(`  level ${l.level}: ${l.files} file${l.files === 1 ? '' : 's'}, ${l.bytes} bytes`);
  }
  if (levels.every((l) => l.files === 0)) out.line('  no table files');
}

/** `stats DIR`: `sievekv.stats`, files and bytes per level, the distinct-key estimate. */
export async function runStats(fs: FileSystem, dir: string, json: boolean, out: LineWriter): Promise<number> {
  await withDB(fs, dir, (db) => {
    const stats = db.getProperty('sievekv.stats') ?? '{}';
    const levels = levelFigures(db);
    const estimate = Number(db.getProperty('sievekv.estimate-num-keys'));
    const memory = Number(db.getProperty('sievekv.approximate-memory-usage'));
    if (json) {
      out.json({ kind: 'stats', stats: JSON.parse(stats), levels, estimateNumKeys: estimate, approximateMemoryUsage: memory });
      return;
    }
    out.line('sievekv.stats:');
    out.line(stats);
    out.line('levels:');
    writeLevels(levels, out);
    out.line(`estimate-num-keys: ${estimate}`);
    out.line(`approximate-memory-usage: ${memory}`);
  });
  return 0;
}

/** `compact DIR`: flushes and compacts the whole key range; shows the levels before and after. */
export async function runCompact(fs: FileSystem, dir: string, json: boolean, out: LineWriter): Promise<number> {
  await withDB(fs, dir, async (db) => {
    const before = levelFigures(db);
    await db.compactRange();
    const after = levelFigures(db);
    if (json) {
      out.json({ kind: 'compact', before, after });
      return;
    }
    out.line('before:');
    writeLevels(before, out);
    out.line('after:');
    writeLevels(after, out);
  });
  return 0;
}
