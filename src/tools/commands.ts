/**
 * The CLI's commands, one entry each: its arguments, its options (what `parseArgs` accepts and
 * what `help` says of them), its help text, and `run`, which checks the arguments (a usage error
 * is a CliError with exit status 2) and calls the command's module. `sievekv help` lists them in
 * this order; `sievekv help COMMAND` and `sievekv COMMAND --help` print one.
 */
import { Buffer } from 'node:buffer';
import type { CompressionName } from '../options.js';
import type { CommandContext } from './command-context.js';
import { runGet, runScan, runStats } from './db-commands.js';
import { type DumpKind, runDump } from './dump-command.js';
import { CliError } from './error-text.js';
import { fromHex } from './format-bytes.js';
import { runRepair, runVerify } from './recovery-commands.js';
import { runCheckpoint, runCompact, runDel, runPut } from './write-commands.js';

export interface OptionSpec {
  readonly type: 'boolean' | 'string';
  /** The value's name in help (string options). */
  readonly value?: string;
  readonly help: string;
}

/** What parseArgs gave: booleans and strings by option name. */
export type OptionValues = Record<string, string | boolean | undefined>;

export interface Command {
  readonly name: string;
  /** The positional arguments, as help shows them (`DIR KEY`). */
  readonly args: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** One line for the command list. */
  readonly summary: string;
  /** The paragraphs of `help COMMAND`. */
  readonly description: readonly string[];
  run(ctx: CommandContext, positionals: readonly string[], values: OptionValues): Promise<number> | number;
}

const JSON_OPTION: OptionSpec = { type: 'boolean', help: 'one JSON object (JSON Lines for dump) instead of text' };
const HEX_OPTION: OptionSpec = { type: 'boolean', help: 'keys (and values) on the command line are hex; keys and values print as bare hex' };

/** Throws the usage error unless there are exactly `names.length` positionals. */
function expectArgs(command: string, positionals: readonly string[], names: readonly string[]): void {
  if (positionals.length !== names.length) {
    const got = `${positionals.length} argument${positionals.length === 1 ? '' : 's'}`;
    throw new CliError(`${command} takes ${names.join(' ')}, got ${got}`, 2);
  }
}

/** A key or value from the command line: UTF-8, or hex with `--hex`. */
function bytesArg(text: string, hex: boolean, what: string): Uint8Array {
  if (!hex) return new Uint8Array(Buffer.from(text, 'utf8'));
  try {
    return fromHex(text, what);
  } catch {
    throw new CliError(`${what} is not hex: ${JSON.stringify(text)}`, 2);
  }
}

function choice<T extends string>(value: string | boolean | undefined, name: string, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    const list = allowed.length === 2 ? allowed.join(' or ') : `${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}`;
    throw new CliError(`--${name} must be ${list}, not ${JSON.stringify(value)}`, 2);
  }
  return value as T;
}

const READ_ONLY_NOTE =
  'It opens the database read-only: no lock is taken and nothing is written, so it works while an application holds the database open, and shows the state on disk when it opens (the tables and the WALs; what the writer wrote after that is not seen).';
const LOCK_NOTE = 'It takes the database\'s lock: on a database another process holds open it stops with one line, "LOCKED: … its lock is held by process N", and exit status 1.';

export const COMMANDS: readonly Command[] = [
  {
    name: 'get',
    args: 'DIR KEY',
    options: { hex: HEX_OPTION },
    summary: 'print the value of KEY (exit 1 if it is absent)',
    description: ['Prints the value of KEY in the database in DIR: as text when it is printable, else as 0x-hex. A missing key is one line on stderr and exit status 1.', READ_ONLY_NOTE],
    run: (ctx, p, v) => {
      expectArgs('get', p, ['DIR', 'KEY']);
      return runGet(ctx, p[0]!, bytesArg(p[1]!, v.hex === true, 'KEY'), v.hex === true);
    },
  },
  {
    name: 'scan',
    args: 'DIR',
    options: {
      gte: { type: 'string', value: 'K', help: 'from K on (inclusive)' },
      gt: { type: 'string', value: 'K', help: 'after K' },
      lt: { type: 'string', value: 'K', help: 'before K' },
      lte: { type: 'string', value: 'K', help: 'up to K (inclusive)' },
      limit: { type: 'string', value: 'N', help: 'at most N entries' },
      reverse: { type: 'boolean', help: 'in descending key order' },
      json: { type: 'boolean', help: 'JSON Lines {"key":"<hex>","value":"<hex>"}' },
      hex: HEX_OPTION,
    },
    summary: 'print the entries in key order within the bounds',
    description: [
      'Prints the entries of the database in DIR in key order (descending with --reverse), one per line: KEY => VALUE, each as "text" when printable, else 0x-hex.',
      READ_ONLY_NOTE,
      'A long scan shows how many entries it has printed on stderr, unless stdout is a terminal.',
    ],
    run: (ctx, p, v) => {
      expectArgs('scan', p, ['DIR']);
      if (v.gt !== undefined && v.gte !== undefined) throw new CliError('give --gt or --gte, not both', 2);
      if (v.lt !== undefined && v.lte !== undefined) throw new CliError('give --lt or --lte, not both', 2);
      const hex = v.hex === true;
      const range: Record<string, unknown> = { reverse: v.reverse === true };
      for (const bound of ['gte', 'gt', 'lt', 'lte'] as const) {
        const b = v[bound];
        if (typeof b === 'string') range[bound] = bytesArg(b, hex, `--${bound}`);
      }
      if (typeof v.limit === 'string') {
        if (!/^\d+$/.test(v.limit)) throw new CliError(`--limit must be a non-negative integer, not ${JSON.stringify(v.limit)}`, 2);
        range.limit = Number(v.limit);
      }
      return runScan(ctx, p[0]!, { range, json: v.json === true, hex });
    },
  },
  {
    name: 'stats',
    args: 'DIR',
    options: { json: JSON_OPTION },
    summary: 'files, size and compaction work per level (leveldb.stats), keys',
    description: [
      "Prints LevelDB's leveldb.stats table for the database in DIR (per level: files, size, and the time, bytes read and bytes written of compactions since the open), then the total, the estimated number of distinct keys, the last sequence number, what the memtables hold and, for a sharded database, each region. --json gives the same and the whole sievekv.stats.",
      READ_ONLY_NOTE,
    ],
    run: (ctx, p, v) => {
      expectArgs('stats', p, ['DIR']);
      return runStats(ctx, p[0]!, v.json === true);
    },
  },
  {
    name: 'verify',
    args: 'DIR',
    options: { json: JSON_OPTION },
    summary: 'check every file without writing; exit 1 if damage is found',
    description: [
      "Checks every file of the database in DIR: CURRENT, every MANIFEST record (checksums, required fields, file numbers, key order within each level), every table the MANIFEST names (size, every block's checksum and structure, key order, filters, properties, keys inside the recorded range) and every live WAL record. Prints each problem (file, offset, reason) and a summary. Exit status 0 healthy, 1 damaged. A torn tail of the newest WAL and tables the MANIFEST no longer names are notes, not damage.",
      'It takes no lock and writes nothing, so it also checks a database an application holds open; a run during which the writer moved on (a compaction deleted what it was reading) and that found problems is done again. Progress on stderr.',
    ],
    run: (ctx, p, v) => {
      expectArgs('verify', p, ['DIR']);
      return runVerify(ctx, p[0]!, v.json === true);
    },
  },
  {
    name: 'put',
    args: 'DIR KEY VALUE',
    options: { hex: HEX_OPTION },
    summary: 'write one key (takes the lock; synced before it exits)',
    description: ['Sets KEY to VALUE in the database in DIR, synced to disk before it exits. Prints nothing.', LOCK_NOTE],
    run: (ctx, p, v) => {
      expectArgs('put', p, ['DIR', 'KEY', 'VALUE']);
      const hex = v.hex === true;
      return runPut(ctx, p[0]!, bytesArg(p[1]!, hex, 'KEY'), bytesArg(p[2]!, hex, 'VALUE'));
    },
  },
  {
    name: 'del',
    args: 'DIR KEY',
    options: { hex: HEX_OPTION },
    summary: 'delete one key (takes the lock; synced before it exits)',
    description: ['Deletes KEY from the database in DIR (a key that is absent is not an error), synced to disk before it exits. Prints nothing.', LOCK_NOTE],
    run: (ctx, p, v) => {
      expectArgs('del', p, ['DIR', 'KEY']);
      return runDel(ctx, p[0]!, bytesArg(p[1]!, v.hex === true, 'KEY'));
    },
  },
  {
    name: 'compact',
    args: 'DIR',
    options: { json: JSON_OPTION },
    summary: 'flush and compact the whole key range (takes the lock)',
    description: ['Flushes the memtables of the database in DIR and compacts the whole key range down to the deepest level holding data; prints the files per level before and after. Progress on stderr.', LOCK_NOTE],
    run: (ctx, p, v) => {
      expectArgs('compact', p, ['DIR']);
      return runCompact(ctx, p[0]!, v.json === true);
    },
  },
  {
    name: 'checkpoint',
    args: 'DIR TARGET',
    options: { json: JSON_OPTION },
    summary: 'copy the database as of now into a new directory (takes the lock)',
    description: [
      "Makes a consistent copy of the database in DIR in TARGET, which must not exist or be empty (db.checkpoint): tables are hard-linked where the file system allows (copied otherwise: another file system), the MANIFEST and WALs copied. Opening TARGET gives the database as it was. Prints what was linked and copied. Progress on stderr.",
      `${LOCK_NOTE} From a program that has the database open, call db.checkpoint(TARGET) instead: it runs while writes go on.`,
    ],
    run: (ctx, p, v) => {
      expectArgs('checkpoint', p, ['DIR', 'TARGET']);
      return runCheckpoint(ctx, p[0]!, p[1]!, v.json === true);
    },
  },
  {
    name: 'repair',
    args: 'DIR',
    options: { json: JSON_OPTION, compression: { type: 'string', value: 'none|snappy|lz4', help: 'the compression of the tables it writes (default lz4)' } },
    summary: 'rebuild a database that no longer opens (takes the lock)',
    description: [
      "Rebuilds the database in DIR from the files it holds when it no longer opens (CURRENT missing, a damaged MANIFEST, table or WAL), as LevelDB's RepairDB (DB.repair): readable entries are kept, what cannot be read is moved to lost/. Prints what was kept and dropped; exit status 0 once the database is rebuilt, even if some data could not be read (the report says so). Progress on stderr.",
      LOCK_NOTE,
    ],
    run: (ctx, p, v) => {
      expectArgs('repair', p, ['DIR']);
      const compression = choice<CompressionName>(v.compression, 'compression', ['none', 'snappy', 'lz4']);
      return runRepair(ctx, p[0]!, v.json === true, compression);
    },
  },
  {
    name: 'dump',
    args: 'FILE...',
    options: {
      json: { type: 'boolean', help: 'JSON Lines, keys and values in hex, one short line per entry, index block, file or fault' },
      verify: { type: 'boolean', help: 'check every checksum and block; print OK, or report the first bad block and exit 1' },
      stats: { type: 'boolean', help: 'blocks, sizes, compression ratio, entries, keys per filter' },
      kind: { type: 'string', value: 'table|log|manifest', help: 'the kind of file, when its name does not tell' },
    },
    summary: 'show a table, WAL, MANIFEST or CURRENT file (no database opened)',
    description: [
      "Shows each FILE without opening the database, like LevelDB's leveldbutil and RocksDB's sst_dump. A table: footer, metaindex, properties, index, filter summary, then every entry as key @ seq : value. A WAL: each batch with its offset, sequence and count, then its puts and deletes; damaged stretches with offset, bytes and reason. A MANIFEST: each edit, then the live files. CURRENT: the MANIFEST it names. An empty WAL or MANIFEST says so.",
    ],
    run: (ctx, p, v) => {
      if (p.length === 0) throw new CliError('dump needs a FILE', 2);
      const kind = choice<Exclude<DumpKind, 'current'>>(v.kind, 'kind', ['table', 'log', 'manifest']);
      return runDump(ctx, p, kind, { json: v.json === true, verify: v.verify === true, stats: v.stats === true });
    },
  },
];

export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/** `Usage: sievekv NAME ARGS [--option VALUE]…` */
export function synopsis(c: Command): string {
  const opts = Object.entries(c.options).map(([name, o]) => (o.type === 'boolean' ? `[--${name}]` : `[--${name} ${o.value ?? 'VALUE'}]`));
  return [`sievekv ${c.name}`, c.args, ...opts].join(' ');
}

/** Wraps `text` at `width` columns, each line indented by `indent`. */
function wrap(text: string, width: number, indent: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(indent + line);
  return lines;
}

export const USAGE = [
  'Usage: sievekv <command> [arguments]',
  '',
  'Commands:',
  ...COMMANDS.map((c) => `  ${`${c.name} ${c.args}`.padEnd(22)}${c.summary}`),
  `  ${'help [COMMAND]'.padEnd(22)}this text, or a command's arguments and options`,
  '',
  'get, scan, stats and verify open the database read-only: no lock, nothing written; they',
  'work while an application holds it open. put, del, compact, checkpoint and repair take its',
  'lock: LOCKED (exit 1) while another process has it open.',
  "Run 'sievekv help COMMAND' or 'sievekv COMMAND --help' for a command's options;",
  "'sievekv --version' prints the version.",
  'Long work shows progress on stderr: a bar on a terminal, a line now and then otherwise',
  '(SIEVEKV_PROGRESS=bar|lines|none chooses).',
  'Errors are one line on stderr: sievekv: CODE: what: why.',
  'Exit status: 0 success, 1 error (key not found, damage found), 2 usage error.',
  '',
].join('\n');

/** `sievekv help NAME`. */
export function commandHelp(c: Command): string {
  const lines = [`Usage: ${synopsis(c)}`, ''];
  for (const paragraph of c.description) lines.push(...wrap(paragraph, 96, ''), '');
  const entries = Object.entries(c.options);
  if (entries.length > 0) {
    lines.push('Options:');
    for (const [name, o] of entries) {
      const flag = o.type === 'boolean' ? `--${name}` : `--${name} ${o.value ?? 'VALUE'}`;
      lines.push(`  ${flag.padEnd(26)}${o.help}`);
    }
    lines.push('');
  }
  return lines.join('\n');
}
