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

/** What `f` throws, or undefined if it returns: for assertions on the error itself. */
export function thrownBy(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  return undefined;
}
