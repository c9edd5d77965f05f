/**
 * The `sievekv` command line: `main(argv, io)` parses the arguments, runs one command (see
 * commands.ts) and returns the exit status (0 ok; 1 an error, a missing key, or damage found; 2 a
 * usage error). It never calls `process.exit` and writes only through `io`, so tests run it
 * in-process; bin/sievekv.ts is the thin wrapper that hands it `process.argv`, the standard
 * streams and the progress mode.
 *
 * Expected errors — a missing or unreadable file, a corrupt one, a locked database — are one
 * line on stderr, `sievekv: CODE: what: why` (the code of a SieveError, then the file or
 * directory and the offset for damage); only an unexpected error (a bug) prints its stack.
 */
import { parseArgs } from 'node:util';
import { SieveError } from '../errors.js';
import type { FileSystem } from '../fs/file-system.js';
import { NodeFileSystem } from '../fs/node-fs.js';
import type { CommandContext } from './command-context.js';
import { COMMANDS, commandHelp, findCommand, USAGE, type Command, type OptionValues } from './commands.js';
import { CliError, describeError } from './error-text.js';
import { type CliIO, LineWriter } from './output.js';
import { Progress } from './progress.js';
import { packageVersion } from './version.js';

export type { CliIO, TextSink } from './output.js';
export { USAGE } from './commands.js';

/** A parseArgs complaint (unknown option, missing value), reduced to its first sentence. */
function usageComplaint(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS_')) return undefined;
  const msg = (err as Error).message;
  const stop = msg.indexOf('. ');
  return stop === -1 ? msg : msg.slice(0, stop + 1);
}

function parse(command: Command, args: string[]): { positionals: string[]; values: OptionValues } {
  const options = Object.fromEntries(Object.entries(command.options).map(([name, o]) => [name, { type: o.type }]));
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options });
  return { positionals, values: values as OptionValues };
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
  const ctx: CommandContext = {
    fs,
    out,
    err,
    progress: (label, unit) => new Progress(io.stderr, io.progress ?? 'none', label, unit, io.progressTiming),
    stdoutIsTTY: io.stdoutIsTTY === true,
  };
  const [name, ...rest] = argv;
  /** What an error concerns: the command's first argument (its DIR), once parsed. */
  let subject: string | undefined;
  try {
    if (name === undefined) {
      io.stderr.write(USAGE);
      return 2;
    }
    if (name === '--version' || name === '-V' || name === 'version') {
      out.line(`sievekv ${packageVersion()}`);
      return 0;
    }
    if (name === 'help' || name === '--help' || name === '-h') {
      const topic = name === 'help' ? rest[0] : undefined;
      if (topic === undefined) {
        out.line(USAGE.trimEnd());
        return 0;
      }
      const command = findCommand(topic);
      if (command === undefined) throw new CliError(`no command ${JSON.stringify(topic)}: the commands are ${COMMANDS.map((c) => c.name).join(', ')}`, 2);
      out.line(commandHelp(command).trimEnd());
      return 0;
    }
    const command = findCommand(name);
    if (command === undefined) throw new CliError(`unknown command ${JSON.stringify(name)}`, 2);
    if (rest.includes('--help') || rest.includes('-h')) {
      out.line(commandHelp(command).trimEnd());
      return 0;
    }
    const { positionals, values } = parse(command, rest);
    subject = positionals[0];
    return await command.run(ctx, positionals, values);
  } catch (e) {
    const complaint = usageComplaint(e);
    if (complaint !== undefined) {
      err(complaint);
      io.stderr.write(`Run 'sievekv help${name !== undefined && findCommand(name) !== undefined ? ` ${name}` : ''}' for usage.\n`);
      return 2;
    }
    if (e instanceof CliError) {
      err(e.message);
      if (e.exitCode === 2) {
        if (/^unknown command/.test(e.message)) io.stderr.write(USAGE);
        else io.stderr.write(`Run 'sievekv help${name !== undefined && findCommand(name) !== undefined ? ` ${name}` : ''}' for usage.\n`);
      }
      return e.exitCode;
    }
    if (e instanceof SieveError) {
      err(describeError(e, subject));
      return 1;
    }
    err(`internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    return 1;
  } finally {
    out.flush();
  }
}
