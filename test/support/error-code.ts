import { isSieveError, type ErrorCode } from '../../src/errors.js';

/** The code of the SieveError `f` throws or rejects with, or 'none' if it succeeds; other errors propagate. */
export async function codeOf(f: () => unknown): Promise<ErrorCode | 'none'> {
  try {
    await f();
  } catch (err) {
    if (isSieveError(err)) return err.code;
    throw err;
  }
  return 'none';
}
