/**
 * The CLI's recovery commands: `repair DIR` (DB.repair, which takes the directory's lock: the
 * database must be closed) and `verify DIR` (tools/verify.ts: reads, never writes, takes no
 * lock). Each prints a report — text, or one JSON object with `--json` — and returns the exit
 * status: repair 0 once the database is rebuilt (even if some data could not be kept: the report
 * says what), verify 0 healthy, 1 damaged.
 */
import { DB } from '../db.js';
import type { FileSystem } from '../fs/file-system.js';
import type { RepairReport } from '../db/repair.js';
import type { CompressionName } from '../options.js';
import { CliError } from './error-text.js';
import { formatSize } from './format-bytes.js';
import type { LineWriter } from './output.js';
import { verifyDB, type VerifyProblem, type VerifyReport } from './verify.js';

/** Progress lines of `verify` go to stderr every this many tables (databases larger than that). */
export const VERIFY_PROGRESS_EVERY = 100;

function where(p: VerifyProblem): string {
  return `${p.file}${p.offset !== undefined ? ` at offset ${p.offset}` : ''}: ${p.reason}`;
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** `repair DIR`: rebuilds the MANIFEST from the files found; prints what was kept and dropped. */
export async function runRepair(fs: FileSystem, dir: string, json: boolean, compression: CompressionName | undefined, out: LineWriter): Promise<number> {
  if (!fs.exists(dir)) throw new CliError(`cannot open ${dir}: no such directory`);
  const report = await DB.repair(dir, { fs, ...(compression !== undefined ? { compression } : {}) });
  if (json) out.json({ kind: 'repair', ...report });
  else writeRepairReport(report, out);
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

/** `verify DIR`: checks every file; progress on stderr; exit 1 if anything is damaged. */
export function runVerify(fs: FileSystem, dir: string, json: boolean, out: LineWriter, err: (line: string) => void): number {
  if (!fs.exists(dir)) throw new CliError(`cannot open ${dir}: no such directory`);
  const report = verifyDB(dir, {
    fs,
    onProgress: (p) => {
      if (p.tablesTotal <= VERIFY_PROGRESS_EVERY) return;
      if (p.tablesDone % VERIFY_PROGRESS_EVERY === 0 || p.tablesDone === p.tablesTotal) {
        err(`verify: ${p.tablesDone}/${p.tablesTotal} tables (${formatSize(p.bytesDone)} of ${formatSize(p.bytesTotal)})`);
      }
    },
  });
  if (json) out.json({ kind: 'verify', ...report });
  else writeVerifyReport(report, out);
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
