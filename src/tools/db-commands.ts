/**
 * The CLI commands that read a database through the public `DB`: `get`, `scan`, `stats`. Each
 * opens it read-only (tools/db-open.ts): no lock taken and nothing written, so they work on a
 * database an application holds open, and show the state on disk when they open (the writer's
 * tables and WALs; what it wrote after that is not seen).
 */
import type { DB } from '../db.js';
import type { IteratorRangeOptions } from '../iterator/iterator-options.js';
import { NUM_LEVELS } from '../version/version-edit.js';
import type { CommandContext } from './command-context.js';
import { withDatabase } from './db-open.js';
import { formatSize, printableText, showBytes, toHex } from './format-bytes.js';

/**
 * `get DIR KEY`: the value on stdout — as text when it is printable, else `0x` + hex; with
 * `hex`, KEY is read as hex and the value printed as bare hex. Exit 1 (and a stderr line) when
 * the key is absent.
 */
export async function runGet(ctx: CommandContext, dir: string, key: Uint8Array, hex: boolean): Promise<number> {
  const value = await withDatabase(ctx.fs, dir, 'read-only', (db) => db.getSync(key));
  if (value === undefined) {
    ctx.err(`key not found: ${hex ? toHex(key) : showBytes(key)}`);
    return 1;
  }
  ctx.out.line(hex ? toHex(value) : (printableText(value) ?? `0x${toHex(value)}`));
  return 0;
}

export interface ScanOptions {
  range: IteratorRangeOptions;
  json: boolean;
  hex: boolean;
}

/** Entries between two looks at the clock for the progress display. */
const SCAN_PROGRESS_EVERY = 1024;

/**
 * `scan DIR`: entries in key order (or reverse) within the bounds, at most `limit`. Text lines
 * `KEY => VALUE` (showBytes, or bare hex with `hex`); JSON Lines `{"key":"<hex>","value":"<hex>"}`
 * (the fixtures' expected.jsonl format). A long scan shows its count on stderr, unless stdout is a
 * terminal (the entries themselves show how far it got).
 */
export async function runScan(ctx: CommandContext, dir: string, options: ScanOptions): Promise<number> {
  await withDatabase(ctx.fs, dir, 'read-only', (db) => {
    const progress = ctx.stdoutIsTTY ? undefined : ctx.progress('scan', { one: 'entry', many: 'entries' });
    const it = db.iterator(options.range);
    let entries = 0;
    let bytes = 0;
    try {
      for (const [k, v] of it) {
        if (options.json) ctx.out.line(`{"key":"${toHex(k)}","value":"${toHex(v)}"}`);
        else if (options.hex) ctx.out.line(`${toHex(k)} => ${toHex(v)}`);
        else ctx.out.line(`${showBytes(k)} => ${showBytes(v)}`);
        entries++;
        bytes += k.length + v.length;
        if (progress !== undefined && entries % SCAN_PROGRESS_EVERY === 0) progress.update(entries, undefined, `${formatSize(bytes)} of keys and values`);
      }
    } finally {
      it.close();
      progress?.finish(entries, `${formatSize(bytes)} of keys and values`);
    }
  });
  return 0;
}

/** One level's figures: files and bytes now, compaction work since the open. */
export interface LevelFigure {
  level: number;
  files: number;
  bytes: number;
  bytesRead: number;
  bytesWritten: number;
}

export interface StatsJson {
  lastSequence: number;
  levels: { level: number; files: number; bytes: number; bytesRead: number; bytesWritten: number }[];
}

/** `sievekv.stats`, parsed. */
function statsOf(db: DB): StatsJson {
  return JSON.parse(db.getProperty('sievekv.stats') ?? '{}') as StatsJson;
}

/** Every level (0..6), from `sievekv.stats` (which lists the levels with files or work). */
export function levelFigures(db: DB, stats: StatsJson = statsOf(db)): LevelFigure[] {
  const out: LevelFigure[] = [];
  for (let level = 0; level < NUM_LEVELS; level++) {
    const l = stats.levels.find((x) => x.level === level);
    out.push({ level, files: l?.files ?? 0, bytes: l?.bytes ?? 0, bytesRead: l?.bytesRead ?? 0, bytesWritten: l?.bytesWritten ?? 0 });
  }
  return out;
}

interface RegionJson {
  region: number;
  directory: string;
  estimatedKeys: number;
  bytes: number;
  levels: { level: number; files: number }[];
}

/**
 * `stats DIR`: LevelDB's `leveldb.stats` table (files, size and compaction work per level), then
 * totals, the distinct-key estimate, the last sequence, what the memtables hold, and each region
 * of a sharded database. `--json`: the same as one object, with `sievekv.stats` whole.
 */
export async function runStats(ctx: CommandContext, dir: string, json: boolean): Promise<number> {
  await withDatabase(ctx.fs, dir, 'read-only', (db) => {
    const stats = statsOf(db);
    const levels = levelFigures(db, stats);
    const estimate = Number(db.getProperty('sievekv.estimate-num-keys'));
    const memory = Number(db.getProperty('sievekv.approximate-memory-usage'));
    const regions = JSON.parse(db.getProperty('sievekv.regions') ?? '[]') as RegionJson[];
    const out = ctx.out;
    if (json) {
      out.json({
        kind: 'stats',
        dir,
        levels,
        estimateNumKeys: estimate,
        approximateMemoryUsage: memory,
        lastSequence: stats.lastSequence,
        ...(regions.length > 1 ? { regions: regions.map(({ region, directory, estimatedKeys, bytes }) => ({ region, directory, estimatedKeys, bytes })) } : {}),
        stats,
      });
      return;
    }
    for (const line of (db.getProperty('leveldb.stats') ?? '').trimEnd().split('\n')) out.line(line);
    const files = levels.reduce((n, l) => n + l.files, 0);
    const bytes = levels.reduce((n, l) => n + l.bytes, 0);
    out.line(`total: ${files} table${files === 1 ? '' : 's'}, ${formatSize(bytes)}`);
    out.line(`keys: about ${estimate.toLocaleString('en-US')} distinct (estimated from the tables' sketches and the memtables)`);
    out.line(`last sequence: ${stats.lastSequence}`);
    out.line(`memtables: ${formatSize(memory)} of memory (the WALs' writes, not yet in tables)`);
    if (regions.length > 1) {
      for (const r of regions) {
        const n = r.levels.reduce((s, l) => s + l.files, 0);
        out.line(`region ${r.region} (${r.directory}): ${n} table${n === 1 ? '' : 's'}, ${formatSize(r.bytes)}, about ${r.estimatedKeys.toLocaleString('en-US')} keys`);
      }
    }
    out.line('(Time, Read, Write: compactions by this process since it opened the database; none here.)');
  });
  return 0;
}
