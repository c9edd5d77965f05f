/**
 * `getProperty('leveldb.stats')`: LevelDB's per-level table (db_impl.cc, "leveldb.stats"), as text:
 *
 *                                  Compactions
 *   Level  Files Size(MB) Time(sec) Read(MB) Write(MB)
 *   --------------------------------------------------
 *     0        2     0.05      0.00     0.00      0.10
 *
 * One line per level that holds files or was written since the open: its files and bytes now
 * (summed over regions), and the work of the compactions into it since the open — the time they
 * took where it is recorded, the bytes they read and wrote (level 0's writes are the flushes).
 * Sizes print with two decimals where LevelDB rounds to whole megabytes, so small databases show
 * something. `sievekv.stats` holds the same figures, and more, as JSON.
 */
import { NUM_LEVELS } from '../version/version-edit.js';
import type { DBImpl } from './db-impl.js';

/** One line of the table. */
export interface LevelStatsRow {
  readonly level: number;
  readonly files: number;
  readonly bytes: number;
  /** Time compactions into the level took; 0 where none is recorded. */
  readonly micros: number;
  readonly bytesRead: number;
  readonly bytesWritten: number;
}

/** The rows of the table: levels with files, or with work since the open. */
export function levelStatsRows(db: DBImpl): LevelStatsRow[] {
  const v = db.versions.current;
  const rows: LevelStatsRow[] = [];
  for (let level = 0; level < NUM_LEVELS; level++) {
    let files = 0;
    let bytes = 0;
    let micros = 0;
    let bytesRead = 0;
    let bytesWritten = level === 0 ? db.stats.bytesFlushed : 0;
    for (let r = 0; r < db.regions.length; r++) {
      files += v.numFiles(r, level);
      bytes += v.levelBytes(r, level);
      const w = db.background.levelWork[r]![level]!;
      micros += w.micros;
      bytesRead += w.bytesRead;
      bytesWritten += w.bytesWritten;
    }
    if (files > 0 || bytesRead > 0 || bytesWritten > 0) rows.push({ level, files, bytes, micros, bytesRead, bytesWritten });
  }
  return rows;
}

const MB = 1024 * 1024;

/** The table as LevelDB lays it out (header, rule, one line per row). */
export function formatLevelStats(rows: readonly LevelStatsRow[]): string {
  const mb = (bytes: number, width: number): string => (bytes / MB).toFixed(2).padStart(width);
  const lines = [
    '                               Compactions',
    'Level  Files Size(MB) Time(sec) Read(MB) Write(MB)',
    '--------------------------------------------------',
  ];
  for (const r of rows) {
    lines.push(
      `${String(r.level).padStart(3)} ${String(r.files).padStart(8)} ${mb(r.bytes, 8)} ${(r.micros / 1e6).toFixed(2).padStart(9)} ${mb(r.bytesRead, 8)} ${mb(r.bytesWritten, 9)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export function levelDBStats(db: DBImpl): string {
  return formatLevelStats(levelStatsRows(db));
}
