/**
 * The closed set of error codes sievekv reports. Each has a heading under "Errors" in the README.
 * Persisted nowhere, but part of the public contract: never rename a code.
 */
export const ErrorCode = {
  /** A checksum, magic number, length or encoding is wrong: names the file and offset. */
  CORRUPTION: 'CORRUPTION',
  /** The operating system failed an I/O call (EIO, ENOSPC, ...): `cause` holds its error. */
  IO_ERROR: 'IO_ERROR',
  /** Misuse: a bad option, a key of the wrong type, an out-of-range parameter. */
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  /** Another process (or another open DB in this one) holds the directory's lock. */
  LOCKED: 'LOCKED',
  /** The database, iterator or snapshot was closed before the call. */
  CLOSED: 'CLOSED',
  /** A feature this build or this file does not support (e.g. an unknown compression type). */
  NOT_SUPPORTED: 'NOT_SUPPORTED',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export interface SieveErrorDetails {
  /** The underlying error, if any (an fs error, a decoder's exception). */
  cause?: unknown;
  /** The file the problem was found in. */
  file?: string;
  /** The byte offset within `file` where the problem was found. */
  offset?: number;
}

/** The one error class sievekv throws for everything but plain programming errors. */
export class SieveError extends Error {
  readonly code: ErrorCode;
  readonly file?: string;
  readonly offset?: number;

  constructor(code: ErrorCode, message: string, details: SieveErrorDetails = {}) {
    const where =
      details.file !== undefined
        ? ` (${details.file}${details.offset !== undefined ? ` at offset ${details.offset}` : ''})`
        : details.offset !== undefined
          ? ` (at offset ${details.offset})`
          : '';
    super(`${code}: ${message}${where}`, details.cause !== undefined ? { cause: details.cause } : undefined);
    this.name = 'SieveError';
    this.code = code;
    if (details.file !== undefined) this.file = details.file;
    if (details.offset !== undefined) this.offset = details.offset;
  }
}

export function corruption(message: string, details: SieveErrorDetails = {}): SieveError {
  return new SieveError(ErrorCode.CORRUPTION, message, details);
}

export function invalidArgument(message: string, details: SieveErrorDetails = {}): SieveError {
  return new SieveError(ErrorCode.INVALID_ARGUMENT, message, details);
}

export function notSupported(message: string, details: SieveErrorDetails = {}): SieveError {
  return new SieveError(ErrorCode.NOT_SUPPORTED, message, details);
}

export function ioError(message: string, details: SieveErrorDetails = {}): SieveError {
  return new SieveError(ErrorCode.IO_ERROR, message, details);
}

export function isSieveError(err: unknown, code?: ErrorCode): err is SieveError {
  return err instanceof SieveError && (code === undefined || err.code === code);
}
