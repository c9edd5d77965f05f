/**
 * The CLI commands that open a database for writing: `put`, `del`, `compact`, `checkpoint`. Each
 * takes the directory's lock (tools/db-open.ts): on a database another process holds open it
 * stops at once with one LOCKED line naming the holder. Opening for writing may itself write, as
 * LevelDB's tools do (recovery replays the WAL and starts a new MANIFEST). Writes are synced before
 * the command exits: what it says it wrote survives a crash.
 */
import type { CheckpointReport } from '../db/checkpoint.js';
import type { CommandContext } from './command-context.js';
import { withDatabase } from './db-open.js';
import { levelFigures, type LevelFigure } from './db-commands.js';
import { formatSize } from './format-bytes.js';

/** `put DIR KEY VALUE`: writes one key, synced. Prints nothing. */
export async function runPut(ctx: CommandContext, dir: string, key: Uint8Array, value: Uint8Array): Promise<number> {
  await withDatabase(ctx.fs, dir, 'write', (db) => db.put(key, value, { sync: true }));
  return 0;
}

/** `del DIR KEY`: deletes one key (absent or not), synced. Prints nothing. */
export async function runDel(ctx: CommandContext, dir: string, key: Uint8Array): Promise<number> {
  await withDatabase(ctx.fs, dir, 'write', (db) => db.del(key, { sync: true }));
  return 0;
}

function writeLevels(levels: readonly LevelFigure[], out: CommandContext['out']): void {
  for (const l of levels) {
    if (l.files > 0) out.line(`  level ${l.level}: ${l.files} file${l.files === 1 ? '' : 's'}, ${l.bytes} bytes`);
  }
  if (levels.every((l) => l.files === 0)) out.line('  no table files');
}

/** How often the compaction's progress is looked at. */
const COMPACT_POLL_MS = 100;

/**
 * `compact DIR`: flushes and compacts the whole key range; shows the levels before and after.
 * Progress: the bytes the merges read, against the bytes in tables at the start (each byte is
 * read about once per level it moves down, so the figure is a guide, held below 100% until done).
 */
export async function runCompact(ctx: CommandContext, dir: string, json: boolean): Promise<number> {
  await withDatabase(ctx.fs, dir, 'write', async (db) => {
    const before = levelFigures(db);
    const total = before.reduce((n, l) => n + l.bytes, 0);
    const readSoFar = (): number => levelFigures(db).reduce((n, l) => n + l.bytesRead, 0);
    const start = readSoFar();
    const progress = ctx.progress('compact', 'bytes');
    const timer = setInterval(() => progress.update(Math.min(readSoFar() - start, Math.floor(total * 0.99)), total, 'read by merges'), COMPACT_POLL_MS);
    try {
      await db.compactRange();
    } finally {
      clearInterval(timer);
      progress.finish();
    }
    const after = levelFigures(db);
    if (json) {
      ctx.out.json({ kind: 'compact', before, after });
      return;
    }
    ctx.out.line('before:');
    writeLevels(before, ctx.out);
    ctx.out.line('after:');
    writeLevels(after, ctx.out);
  });
  return 0;
}

/** `checkpoint DIR TARGET`: db.checkpoint(TARGET); prints what was linked and copied. */
export async function runCheckpoint(ctx: CommandContext, dir: string, target: string, json: boolean): Promise<number> {
  const report = await withDatabase(ctx.fs, dir, 'write', async (db) => {
    const progress = ctx.progress('checkpoint', 'bytes');
    try {
      return await db.checkpoint(target, {
        onProgress: (p) => progress.update(p.bytesDone, p.bytesTotal, `${p.filesDone}/${p.filesTotal} files`),
      });
    } finally {
      progress.finish();
    }
  });
  if (json) ctx.out.json({ kind: 'checkpoint', ...report });
  else writeCheckpointReport(report, ctx.out);
  return 0;
}

function writeCheckpointReport(r: CheckpointReport, out: CommandContext['out']): void {
  out.line(`checkpoint in ${r.dir}: last sequence ${r.lastSequence}, CURRENT names ${r.manifest}${r.regions > 1 ? `, ${r.regions} regions` : ''}`);
  const t = r.tables;
  out.line(`tables: ${t.linked} hard-linked, ${t.copied} copied (${formatSize(t.bytes)})`);
  out.line(`WALs: ${r.wals.files} copied (${formatSize(r.wals.bytes)})`);
  out.line(`written: ${formatSize(r.bytesCopied)}`);
}
