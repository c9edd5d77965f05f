/**
 * What every CLI command gets from `main`: the file system to work on, stdout as lines, stderr as
 * one-line messages, and progress displays for long work (on stderr, in the mode the caller of
 * `main` chose; none unless asked).
 */
import type { FileSystem } from '../fs/file-system.js';
import type { LineWriter } from './output.js';
import type { Progress, ProgressUnit } from './progress.js';

export interface CommandContext {
  readonly fs: FileSystem;
  readonly out: LineWriter;
  /** Writes `sievekv: <line>` on stderr (stdout flushed first, to keep the two in order). */
  readonly err: (line: string) => void;
  /** A progress display for `label`'s work, counted in `unit`; call `finish()` when done. */
  progress(label: string, unit: ProgressUnit): Progress;
  /** True if stdout is a terminal: a scan shows no progress then (its output is the progress). */
  readonly stdoutIsTTY: boolean;
}
