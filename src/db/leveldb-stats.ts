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
import type { DBImpl } from './db-impl.js';
import { levelTotals } from './properties.js';

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
  return levelTotals(db)
    .map(({ level, files, bytes, micros, bytesRead, bytesWritten }) => ({
      level,
      files,
      bytes,
      micros,
      bytesRead,
      // Level 0's writes are the flushes'.
      bytesWritten: level === 0 ? bytesWritten + db.stats.bytesFlushed : bytesWritten,
    }))
    .filter((r) => r.files > 0 || r.bytesRead > 0 || r.bytesWritten > 0);
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
