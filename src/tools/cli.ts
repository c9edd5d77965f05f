/**
 * The `sievekv` command line: `main(argv, io)` parses the arguments, runs one command and returns
 * the exit status (0 ok; 1 an error, a missing key, or damage found; 2 a usage error). It never
 * calls `process.exit` and writes only through `io`, so tests run it in-process; bin/sievekv.ts
 * is the thin wrapper that hands it `process.argv` and the standard streams.
 *
 * Expected errors — a missing or unreadable file, a corrupt one, a locked database — are one
 * line on stderr (`sievekv: …`) naming the file and, for damage, the offset; only an unexpected
 * error (a bug) prints its stack.
 */
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { SieveError } from '../errors.js';
import type { FileSystem } from '../fs/file-system.js';
import { NodeFileSystem } from '../fs/node-fs.js';
import { footerFormatOfMagic, MIN_FOOTER_SIZE } from '../sstable/footer.js';
import { FileType, parseFileName } from '../version/filenames.js';
import { runCompact, runGet, runScan, runStats } from './db-commands.js';
import { runRepair, runVerify } from './recovery-commands.js';
import { dumpLog } from './dump-log.js';
import { dumpManifest } from './dump-manifest.js';
import { type DumpFlags, dumpTable } from './dump-table.js';
import { CliError, describeError } from './error-text.js';
import { fromHex } from './format-bytes.js';
import { type CliIO, LineWriter } from './output.js';

export type { CliIO, TextSink } from './output.js';

export const USAGE = `Usage: sievekv <command> [arguments]

Commands:
  dump FILE... [--json] [--verify] [--stats] [--kind table|log|manifest]
      Show a table (.ldb/.sst), a write-ahead log (.log), a MANIFEST-* or CURRENT file.
      --json     JSON Lines: keys and values in hex
      --verify   check every checksum and block; print OK, or report the first bad
                 block (offset, size, reason) and exit 1
      --stats    blocks, sizes, compression ratio, entries, keys per filter
      --kind     the file's kind when its name does not tell
  get DIR KEY [--hex]
      Print the value of KEY (exit 1 if it is absent).
  scan DIR [--gte K] [--gt K] [--lt K] [--lte K] [--limit N] [--reverse] [--json] [--hex]
      Print the entries in key order (--reverse: descending) within the bounds.
  stats DIR [--json]
      Database statistics, files and bytes per level, estimated number of keys.
  compact DIR [--json]
      Flush the memtable and compact the whole key range.
  verify DIR [--json]
      Check every file without writing: CURRENT, the MANIFEST's records, every table's
      blocks and key order, key order across each level, the WALs' records. Prints each
      problem (file, offset, reason) and a summary; progress on stderr for large databases.
      Exit 0 healthy, 1 damaged.
  repair DIR [--json] [--compression none|snappy|lz4]
      Rebuild a database that no longer opens (missing CURRENT, damaged MANIFEST, damaged
      table or WAL) from the files it holds, as LevelDB's RepairDB; what cannot be read is
      moved to lost/. Prints what was kept and dropped. The database must be closed.
  help
      Print this text.

Keys and values print as "text" when they are printable, else as 0x-hex. With --hex,
keys on the command line are hex and keys and values print as bare hex.
get, scan, stats and compact open the database (which must exist) and take its lock;
like LevelDB's tools, opening may write (recovery of the log). Do not run them on a
database another process has open. repair takes the lock too; verify takes none and
writes nothing.
Exit status: 0 success, 1 error (or key not found, or damage found), 2 usage error.
`;

type Kind = 'table' | 'log' | 'manifest' | 'current';

/** The kind of file `path` is: from its name, else by its contents (a table ends with the magic). */
function fileKind(fs: FileSystem, path: string): Kind {
  const name = basename(path);
  const parsed = parseFileName(name);
  switch (parsed?.type) {
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

interface Context {
  fs: FileSystem;
  out: LineWriter;
  err: (line: string) => void;
}

function dumpOne(ctx: Context, path: string, kind: Kind, flags: DumpFlags): number {
  // Open errors first, as one line: a missing file is not a corrupt one.
  ctx.fs.size(path);
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
      if (m === null) throw new CliError(`${path}: corrupt: CURRENT does not name a MANIFEST (${JSON.stringify(text.slice(0, 40))})`);
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

function runDump(ctx: Context, args: string[]): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      verify: { type: 'boolean', default: false },
      stats: { type: 'boolean', default: false },
      kind: { type: 'string' },
    },
  });
  if (positionals.length === 0) throw new CliError('dump needs a FILE', 2);
  const forced = values.kind;
  if (forced !== undefined && forced !== 'table' && forced !== 'log' && forced !== 'manifest') {
    throw new CliError(`--kind must be table, log or manifest, not ${JSON.stringify(forced)}`, 2);
  }
  const flags: DumpFlags = { json: values.json, verify: values.verify, stats: values.stats };
  let status = 0;
  for (const path of positionals) {
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

function keyArg(text: string, hex: boolean, what: string): Uint8Array {
  try {
    return hex ? fromHex(text, what) : new Uint8Array(Buffer.from(text, 'utf8'));
  } catch (err) {
    throw new CliError(err instanceof SieveError ? `${what} is not hex: ${JSON.stringify(text)}` : String(err), 2);
  }
}

function needDir(command: string, positionals: string[], extra = 0): string {
  if (positionals.length !== 1 + extra) {
    throw new CliError(`${command} takes ${extra === 0 ? 'DIR' : 'DIR KEY'}, got ${positionals.length} argument${positionals.length === 1 ? '' : 's'}`, 2);
  }
  return positionals[0]!;
}

async function runCommand(ctx: Context, command: string, args: string[]): Promise<number> {
  switch (command) {
    case 'dump':
      return runDump(ctx, args);
    case 'get': {
      const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { hex: { type: 'boolean', default: false } } });
      const dir = needDir('get', positionals, 1);
      return runGet(ctx.fs, dir, keyArg(positionals[1]!, values.hex, 'KEY'), values.hex, ctx.out, ctx.err);
    }
    case 'scan': {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: {
          gte: { type: 'string' },
          gt: { type: 'string' },
          lt: { type: 'string' },
          lte: { type: 'string' },
          limit: { type: 'string' },
          reverse: { type: 'boolean', default: false },
          json: { type: 'boolean', default: false },
          hex: { type: 'boolean', default: false },
        },
      });
      const dir = needDir('scan', positionals);
      if (values.gt !== undefined && values.gte !== undefined) throw new CliError('give --gt or --gte, not both', 2);
      if (values.lt !== undefined && values.lte !== undefined) throw new CliError('give --lt or --lte, not both', 2);
      const range: Record<string, unknown> = { reverse: values.reverse };
      for (const bound of ['gte', 'gt', 'lt', 'lte'] as const) {
        const v = values[bound];
        if (v !== undefined) range[bound] = keyArg(v, values.hex, `--${bound}`);
      }
      if (values.limit !== undefined) {
        if (!/^\d+$/.test(values.limit)) throw new CliError(`--limit must be a non-negative integer, not ${JSON.stringify(values.limit)}`, 2);
        range.limit = Number(values.limit);
      }
      return runScan(ctx.fs, dir, { range, json: values.json, hex: values.hex }, ctx.out);
    }
    case 'verify': {
      const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
      return runVerify(ctx.fs, needDir('verify', positionals), values.json, ctx.out, ctx.err);
    }
    case 'repair': {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: { json: { type: 'boolean', default: false }, compression: { type: 'string' } },
      });
      const dir = needDir('repair', positionals);
      const compression = values.compression;
      if (compression !== undefined && compression !== 'none' && compression !== 'snappy' && compression !== 'lz4') {
        throw new CliError(`--compression must be none, snappy or lz4, not ${JSON.stringify(compression)}`, 2);
      }
      return runRepair(ctx.fs, dir, values.json, compression, ctx.out);
    }
    case 'stats':
    case 'compact': {
      const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
      const dir = needDir(command, positionals);
      return command === 'stats' ? runStats(ctx.fs, dir, values.json, ctx.out) : runCompact(ctx.fs, dir, values.json, ctx.out);
    }
    default:
      throw new CliError(`unknown command ${JSON.stringify(command)}`, 2);
  }
}

/** Errors that get one line and no stack. */
function isExpected(err: unknown): boolean {
  return err instanceof SieveError || err instanceof CliError;
}

/** A parseArgs complaint (unknown option, missing value), reduced to its first sentence. */
function usageComplaint(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS_')) return undefined;
  const msg = (err as Error).message;
  const stop = msg.indexOf('. ');
  return stop === -1 ? msg : msg.slice(0, stop + 1);
}

/**
 * Runs the command in `argv` (the arguments after the program name) and returns the exit
 * status. `fs` is where files are read (the real file system unless a test gives another).
 */
export async function main(argv: readonly string[], io: CliIO, fs: FileSystem = new NodeFileSystem()): Promise<number> {
  const out = new LineWriter(io.stdout);
  const err = (line: string): void => {
    out.flush(); // keep stdout and stderr in order on a terminal
    io.stderr.write(`sievekv: ${line}\n`);
  };
  const [command, ...rest] = argv;
  try {
    if (command === undefined) {
      io.stderr.write(USAGE);
      return 2;
    }
    if (command === 'help' || command === '--help' || command === '-h') {
      out.line(USAGE.trimEnd());
      return 0;
    }
    if (rest.includes('--help') || rest.includes('-h')) {
      out.line(USAGE.trimEnd());
      return 0;
    }
    return await runCommand({ fs, out, err }, command, rest);
  } catch (e) {
    const complaint = usageComplaint(e);
    if (complaint !== undefined) {
      err(complaint);
      io.stderr.write(`Run 'sievekv help' for usage.\n`);
      return 2;
    }
    if (e instanceof CliError) {
      err(e.message);
      if (e.exitCode === 2) {
        if (/^unknown command/.test(e.message)) io.stderr.write(USAGE);
        else io.stderr.write(`Run 'sievekv help' for usage.\n`);
      }
      return e.exitCode;
    }
    if (e instanceof SieveError) {
      err(describeError(e, rest.find((a) => !a.startsWith('-'))));
      return 1;
    }
    err(`internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    return 1;
  } finally {
    out.flush();
  }
}
