/**
 * One-line descriptions of errors for the CLI. Expected errors (SieveError; a missing or
 * unreadable file) become one line without a stack; anything else is a bug and keeps its stack.
 */
import { SieveError } from '../errors.js';

/** An error the CLI itself raises: its message is the whole line, `exitCode` the status. */
export class CliError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** A SieveError's message without the `CODE: ` prefix and the ` (file at offset N)` suffix. */
export function bareMessage(err: unknown): string {
  if (!(err instanceof SieveError)) return err instanceof Error ? err.message : String(err);
  let msg = err.message;
  const prefix = `${err.code}: `;
  if (msg.startsWith(prefix)) msg = msg.slice(prefix.length);
  const where =
    err.file !== undefined
      ? ` (${err.file}${err.offset !== undefined ? ` at offset ${err.offset}` : ''})`
      : err.offset !== undefined
        ? ` (at offset ${err.offset})`
        : '';
  if (where !== '' && msg.endsWith(where)) msg = msg.slice(0, -where.length);
  return msg;
}

const OS_REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'is a directory',
  ENOTDIR: 'not a directory',
  ELOOP: 'too many symbolic links',
  EMFILE: 'too many open files',
  ENAMETOOLONG: 'name too long',
};

/** The OS error code behind `err` (its own `code` or its cause's), if any. */
export function osErrorCode(err: unknown): string | undefined {
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) ? code : undefined;
}

/**
 * The one line the CLI prints for `err` (without the `sievekv: ` prefix): a SieveError's code
 * first (the README's "Errors" has a heading for each), then what it concerns — `path`, the file
 * or directory as the user spelled it, else the error's file — and its message:
 *   `CORRUPTION: db/000005.ldb: block checksum mismatch at offset 4096`
 *   `IO_ERROR: cannot open db/000123.ldb: no such file`
 * A CliError's message is the whole line.
 */
export function describeError(err: unknown, path?: string): string {
  if (err instanceof CliError) return err.message;
  const os = osErrorCode(err);
  const code = err instanceof SieveError ? `${err.code}: ` : '';
  if (os !== undefined && path !== undefined) {
    // The file the system call failed on, if the error names one (a table inside DIR), else `path`.
    const file = err instanceof SieveError && err.file !== undefined ? err.file : path;
    return `${code}cannot open ${file}: ${OS_REASONS[os] ?? os}`;
  }
  if (err instanceof SieveError) {
    const at = err.offset !== undefined ? ` at offset ${err.offset}` : '';
    const subject = path ?? err.file;
    const head = subject !== undefined ? `${subject}: ` : '';
    return `${code}${head}${bareMessage(err)}${at}`;
  }
  return err instanceof Error ? err.message : String(err);
}
