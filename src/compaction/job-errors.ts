/**
 * Errors across the worker boundary: a SieveError keeps its code, message, file and offset; any
 * other error becomes IO_ERROR with its message (a worker's failure is a background error).
 */
import { SieveError, ErrorCode, type ErrorCode as Code } from '../errors.js';

export interface SerializedError {
  code: Code;
  message: string;
  file?: string;
  offset?: number;
}

export function serializeError(err: unknown): SerializedError {
  if (err instanceof SieveError) {
    return { code: err.code, message: err.message, ...(err.file !== undefined ? { file: err.file } : {}), ...(err.offset !== undefined ? { offset: err.offset } : {}) };
  }
  return { code: ErrorCode.IO_ERROR, message: `IO_ERROR: background job failed: ${(err as Error)?.message ?? String(err)}` };
}

export function deserializeError(e: SerializedError): SieveError {
  const err = new SieveError(e.code, '', { ...(e.file !== undefined ? { file: e.file } : {}), ...(e.offset !== undefined ? { offset: e.offset } : {}) });
  err.message = e.message;
  return err;
}
