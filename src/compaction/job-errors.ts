/**
 * Errors across the worker boundary. Structured cloning keeps an Error's message but drops what
 * a caller tests — a SieveError's code, file and offset, a system error's `code` (ENOSPC, EIO),
 * `syscall`, `errno` and `path` — and its `cause`. So an error is sent as a plain record, its
 * causes with it, and rebuilt on the database's thread: a SieveError as a SieveError, anything
 * else as an Error carrying the same fields, just as the job would have thrown it inline (the
 * database then latches it the same way on either path).
 */
import { SieveError, type ErrorCode } from '../errors.js';

export interface SerializedError {
  /** Present for a SieveError. */
  readonly sieve?: { readonly code: ErrorCode; readonly file?: string; readonly offset?: number };
  readonly name: string;
  readonly message: string;
  /** The worker's stack: where the job failed. */
  readonly stack?: string;
  /** A system error's fields (Node's ErrnoException; `dest` for rename and link). */
  readonly code?: string;
  readonly syscall?: string;
  readonly errno?: number;
  readonly path?: string;
  readonly dest?: string;
  readonly cause?: SerializedError;
}

/** Causes kept below the error itself; deeper ones are dropped (a chain is never this long). */
const MAX_CAUSE_DEPTH = 4;

const optionalString = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export function serializeError(err: unknown, depth = 0): SerializedError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const e = err as NodeJS.ErrnoException & { cause?: unknown };
  const fields: { -readonly [K in keyof SerializedError]: SerializedError[K] } = { name: e.name, message: e.message };
  if (typeof e.stack === 'string') fields.stack = e.stack;
  if (err instanceof SieveError) {
    fields.sieve = {
      code: err.code,
      ...(err.file !== undefined ? { file: err.file } : {}),
      ...(err.offset !== undefined ? { offset: err.offset } : {}),
    };
  } else {
    const code = optionalString(e.code);
    const syscall = optionalString(e.syscall);
    const path = optionalString(e.path);
    const dest = optionalString((e as { dest?: unknown }).dest);
    if (code !== undefined) fields.code = code;
    if (syscall !== undefined) fields.syscall = syscall;
    if (typeof e.errno === 'number') fields.errno = e.errno;
    if (path !== undefined) fields.path = path;
    if (dest !== undefined) fields.dest = dest;
  }
  if (e.cause !== undefined && depth < MAX_CAUSE_DEPTH) fields.cause = serializeError(e.cause, depth + 1);
  return fields;
}

export function deserializeError(e: SerializedError): Error {
  const cause = e.cause !== undefined ? deserializeError(e.cause) : undefined;
  if (e.sieve !== undefined) {
    const err = new SieveError(e.sieve.code, '', {
      ...(cause !== undefined ? { cause } : {}),
      ...(e.sieve.file !== undefined ? { file: e.sieve.file } : {}),
      ...(e.sieve.offset !== undefined ? { offset: e.sieve.offset } : {}),
    });
    err.message = e.message; // as built on the worker (its file and offset already in it)
    if (e.stack !== undefined) err.stack = e.stack;
    return err;
  }
  const err = new Error(e.message, cause !== undefined ? { cause } : undefined) as NodeJS.ErrnoException;
  err.name = e.name;
  if (e.stack !== undefined) err.stack = e.stack;
  if (e.code !== undefined) err.code = e.code;
  if (e.syscall !== undefined) err.syscall = e.syscall;
  if (e.errno !== undefined) err.errno = e.errno;
  if (e.path !== undefined) err.path = e.path;
  if (e.dest !== undefined) (err as { dest?: string }).dest = e.dest;
  return err;
}
