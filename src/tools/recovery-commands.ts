/**
 * The CLI's recovery commands: `repair DIR` (DB.repair, which takes the directory's lock: the
 * database must be closed) and `verify DIR` (tools/verify.ts: reads, never writes, takes no
 * lock, so it also checks a database an application holds open). Each prints a report — text,
 * or one JSON object with `--json` — and returns the exit status: repair 0 once the database is
 * rebuilt (even if some data could not be kept: the report says what), verify 0 healthy, 1
 * damaged. Both show progress on stderr (see progress.ts).
 */
import { DB } from '../db.js';
import { listDatabaseFiles, readRegions } from '../db/db-files.js';
import { writerStamp } from '../db/recovery.js';
import type { RepairReport } from '../db/repair.js';
import type { FileSystem } from '../fs/file-system.js';
import type { CompressionName } from '../options.js';
import { FileType } from '../version/filenames.js';
import type { CommandContext } from './command-context.js';
import { CountingFileSystem } from './counting-fs.js';
import { CliError } from './error-text.js';
import { formatSize } from './format-bytes.js';
import type { LineWriter } from './output.js';
import { verifyDB, type VerifyProblem, type VerifyReport } from './verify.js';

/**
 * Runs of `verify` on a database whose writer moved on while it was read (an edit logged, files
 * deleted): problems such a run finds may be the writer's doing, so it reads again.
 */
export const VERIFY_ATTEMPTS = 3;

/**
 * A run during which the writer moved: a file it could not find that is gone now was deleted by
 * the writer (a WAL now in a table, a table compacted away: it logs the change first, which moved
 * the stamp) — a note, not damage. Other problems stand.
 */
function withoutRaces(fs: FileSystem, report: VerifyReport): VerifyReport {
  const isRace = (p: VerifyProblem): boolean => /ENOENT|is missing/.test(p.reason) && !fs.exists(p.file);
  const races = report.problems.filter(isRace);
  if (races.length === 0) return report;
  const problems = report.problems.filter((p) => !isRace(p));
  const notes = [...report.notes, ...races.map((p) => ({ ...p, reason: `${p.reason} (deleted by the database's writer while verify read it)` }))];
  return { ...report, problems, notes, healthy: problems.length === 0 };
}

function where(p: VerifyProblem): string {
  return `${p.file}${p.offset !== undefined ? ` at offset ${p.offset}` : ''}: ${p.reason}`;
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** The bytes of the tables and WALs in `dir` (and its regions): what repair reads. */
function databaseBytes(fs: FileSystem, dir: string): number {
  const regions = readRegions(fs, dir);
  const count = regions.kind === 'sharded' ? regions.count : 1;
  let total = 0;
  for (const f of listDatabaseFiles(fs, dir, count)) {
    if (f.type !== FileType.TABLE && f.type !== FileType.LOG) continue;
    try {
      total += fs.size(f.path);
    } catch {
      // Unreadable: repair reports it.
    }
  }
  return total;
}

/**
 * `repair DIR`: rebuilds the MANIFEST from the files found; prints what was kept and dropped.
 * Progress: the bytes repair has read, against the bytes of the tables and WALs it found (it may
 * read some twice: held below 100% until done).
 */
export async function runRepair(ctx: CommandContext, dir: string, json: boolean, compression: CompressionName | undefined): Promise<number> {
  if (!ctx.fs.exists(dir)) throw new CliError(`cannot open ${dir}: no such directory`);
  const total = databaseBytes(ctx.fs, dir);
  const progress = ctx.progress('repair', 'bytes');
  const fs = new CountingFileSystem(ctx.fs, (read) => progress.update(Math.min(read, Math.floor(total * 0.99)), total, 'read'));
  let report: RepairReport;
  try {
    report = await DB.repair(dir, { fs, ...(compression !== undefined ? { compression } : {}) });
  } finally {
    progress.finish();
  }
  if (json) ctx.out.json({ kind: 'repair', ...report });
  else writeRepairReport(report, ctx.out);
  return 0;
}

function writeRepairReport(r: RepairReport, out: LineWriter): void {
  out.line(`repaired ${r.dir}: CURRENT names ${r.manifest} (last sequence ${r.lastSequence}${r.regions > 1 ? `, ${r.regions} regions` : ''})`);
  const t = r.tables;
  out.line(
    `tables: ${t.found} found, ${t.damaged} damaged (${t.unreadable} unreadable), ${t.obsolete} obsolete, ${t.merged} merged for overlapping key ranges; ` +
      `kept ${t.kept} (${formatSize(t.bytesKept)})`,
  );
  out.line(`entries: ${r.entries.read} read, ${r.entries.kept} kept, ${r.entries.superseded} superseded (older versions no reader could see)`);
  out.line(
    `WALs: ${r.wal.files} replayed (${r.wal.obsolete} obsolete): ${r.wal.records} records (${r.wal.entries} entries); ` +
      `${r.wal.recordsDropped} damaged stretches or records dropped (${formatSize(r.wal.bytesDropped)})`,
  );
  out.line(`dropped: ${plural(t.blocksDropped, 'unreadable data block')}, ${formatSize(t.bytesDropped)} of tables`);
  for (const p of r.problems) out.line(`problem: ${where(p)}`);
  for (const path of r.lost) out.line(`moved to lost/: ${path}`);
  out.line(r.dataLost ? 'Some data could not be read and was dropped (see the problems above).' : 'Nothing readable was dropped.');
}

/**
 * `verify DIR`: checks every file; exit 1 if anything is damaged. On a database a writer holds
 * open, a run during which the writer moved (writerStamp changed) and that found problems does
 * not count a file the writer deleted meanwhile as damage (a table compacted away, a WAL retired
 * mid-run: notes), and is done again, up to VERIFY_ATTEMPTS runs, if other problems remain.
 */
export function runVerify(ctx: CommandContext, dir: string, json: boolean): number {
  if (!ctx.fs.exists(dir)) throw new CliError(`cannot open ${dir}: no such directory`);
  let report: VerifyReport;
  for (let attempt = 1; ; attempt++) {
    const stamp = writerStamp(ctx.fs, dir);
    const progress = ctx.progress('verify', 'bytes');
    try {
      report = verifyDB(dir, {
        fs: ctx.fs,
        onProgress: (p) => progress.update(p.bytesDone, p.bytesTotal, `${p.tablesDone}/${p.tablesTotal} tables`),
      });
    } finally {
      progress.finish();
    }
    if (report.healthy || writerStamp(ctx.fs, dir) === stamp) break;
    report = withoutRaces(ctx.fs, report);
    if (report.healthy || attempt === VERIFY_ATTEMPTS) break;
  }
  if (json) ctx.out.json({ kind: 'verify', ...report });
  else writeVerifyReport(report, ctx.out);
  return report.healthy ? 0 : 1;
}

function writeVerifyReport(r: VerifyReport, out: LineWriter): void {
  if (r.manifest !== undefined) out.line(`CURRENT names ${r.manifest}${r.lastSequence !== undefined ? ` (last sequence ${r.lastSequence})` : ''}`);
  const levels = r.tables.perLevel.flatMap((n, level) => (n > 0 ? [`level ${level}: ${n}`] : []));
  out.line(
    `tables: ${r.tables.checked} checked, ${formatSize(r.tables.bytes)}, ${plural(r.tables.entries, 'entry', 'entries')}` +
      `${levels.length > 0 ? ` (${levels.join(', ')})` : ''}${r.regions > 1 ? ` in ${r.regions} regions` : ''}`,
  );
  out.line(`WALs: ${r.wals.checked} checked, ${plural(r.wals.records, 'record')} (${plural(r.wals.entries, 'entry', 'entries')})`);
  for (const p of r.problems) out.line(`problem: ${where(p)}`);
  for (const p of r.notes) out.line(`note: ${where(p)}`);
  out.line(r.healthy ? 'OK: no damage found' : `DAMAGED: ${plural(r.problems.length, 'problem')}`);
}
