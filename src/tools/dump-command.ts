/**
 * `sievekv dump FILE...`: one file at a time, without opening the database — a table, a WAL, a
 * MANIFEST, or CURRENT (which names the MANIFEST to dump). The kind of file comes from its name,
 * else from its contents (a table ends with a footer's magic), else `--kind`. A file that cannot
 * be read is one stderr line and exit 1; the next file is still dumped.
 */
import { TextDecoder } from 'node:util';
import { basename, dirname, join } from 'node:path';
import { SieveError } from '../errors.js';
import type { FileSystem } from '../fs/file-system.js';
import { footerFormatOfMagic, MIN_FOOTER_SIZE } from '../sstable/footer.js';
import { FileType, parseFileName } from '../version/filenames.js';
import type { CommandContext } from './command-context.js';
import { dumpLog } from './dump-log.js';
import { dumpManifest } from './dump-manifest.js';
import { type DumpFlags, dumpTable } from './dump-table.js';
import { CliError, describeError } from './error-text.js';

export type DumpKind = 'table' | 'log' | 'manifest' | 'current';

/** The kind of file `path` is: from its name, else by its contents (a table ends with the magic). */
function fileKind(fs: FileSystem, path: string): DumpKind {
  const name = basename(path);
  switch (parseFileName(name)?.type) {
    case FileType.TABLE:
      return 'table';
    case FileType.LOG:
      return 'log';
    case FileType.DESCRIPTOR:
      return 'manifest';
    case FileType.CURRENT:
      return 'current';
    default:
      break;
  }
  if (name.endsWith('.log')) return 'log';
  if (name.startsWith('MANIFEST')) return 'manifest';
  const file = fs.openReadable(path);
  try {
    if (file.size >= MIN_FOOTER_SIZE) {
      const tail = new Uint8Array(8);
      if (file.readAt(tail, 0, 8, file.size - 8) === 8 && footerFormatOfMagic(tail) !== undefined) return 'table';
    }
  } finally {
    file.close();
  }
  if (name.endsWith('.ldb') || name.endsWith('.sst')) return 'table';
  throw new CliError(`${path}: cannot tell what kind of file this is (not a table; give --kind table|log|manifest)`);
}

/** Errors that get one line and no stack. */
export function isExpected(err: unknown): boolean {
  return err instanceof SieveError || err instanceof CliError;
}

/**
 * An empty WAL or MANIFEST (what a crash right after creating one leaves, or a WAL no write
 * reached yet) says so instead of printing nothing.
 */
function dumpEmpty(ctx: CommandContext, shown: string, kind: 'log' | 'manifest', flags: DumpFlags): number {
  const what = kind === 'log' ? 'write-ahead log' : 'MANIFEST';
  if (flags.json) ctx.out.json({ kind: 'empty', file: shown, fileKind: kind, fileSize: 0 });
  else ctx.out.line(`${shown}: empty ${what} (0 bytes): no ${kind === 'log' ? 'batches' : 'edits'}`);
  return 0;
}

function dumpOne(ctx: CommandContext, path: string, kind: DumpKind, flags: DumpFlags): number {
  // Open errors first, as one line: a missing file is not a corrupt one.
  const size = ctx.fs.size(path);
  if ((kind === 'log' || kind === 'manifest') && size === 0 && !flags.verify && !flags.stats) return dumpEmpty(ctx, path, kind, flags);
  switch (kind) {
    case 'table':
      return dumpTable(ctx.fs, path, path, flags, ctx.out, ctx.err);
    case 'log':
      return dumpLog(ctx.fs, path, path, flags, ctx.out, ctx.err);
    case 'manifest':
      return dumpManifest(ctx.fs, path, path, flags, ctx.out, ctx.err);
    case 'current': {
      const text = new TextDecoder().decode(ctx.fs.readFile(path));
      const m = /^(MANIFEST-\d+)\n?$/.exec(text);
      if (m === null) throw new CliError(`CORRUPTION: ${path}: CURRENT does not name a MANIFEST (${JSON.stringify(text.slice(0, 40))})`);
      if (flags.json) ctx.out.json({ kind: 'current', manifest: m[1] });
      else ctx.out.line(`CURRENT names ${m[1]}`);
      const manifest = join(dirname(path), m[1]!);
      try {
        return dumpOne(ctx, manifest, 'manifest', flags);
      } catch (err) {
        throw isExpected(err) ? new CliError(describeError(err, manifest)) : err;
      }
    }
  }
}

/** Dumps each of `paths`; the exit status is the worst of theirs. */
export function runDump(ctx: CommandContext, paths: readonly string[], forced: DumpKind | undefined, flags: DumpFlags): number {
  let status = 0;
  for (const path of paths) {
    let code: number;
    try {
      code = dumpOne(ctx, path, forced ?? fileKind(ctx.fs, path), flags);
    } catch (err) {
      if (!isExpected(err)) throw err;
      ctx.err(describeError(err, path));
      code = 1;
    }
    status = Math.max(status, code);
  }
  return status;
}
