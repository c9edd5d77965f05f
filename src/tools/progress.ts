/**
 * Progress of the CLI's long work (verify, compact, scan, checkpoint, repair) on stderr, in one of
 * three modes chosen by the bin (`progressMode`): a bar redrawn in place on a terminal, plain
 * lines now and then when stderr is a pipe or a file, or nothing (the default of `main`, so that
 * tests and programs calling it see no progress unless they ask).
 *
 * Nothing shows for work that ends quickly: the first bar waits `delayMs`, the first line
 * `delayMs` too; then a bar is redrawn at most every `everyMs`, and a line is written at each tenth
 * of the way (or every `lineEveryMs` when there is no total). `finish()` clears the bar (the result
 * goes to stdout); in line mode it writes a last line only if any was written. Callers report as
 * often as they like: `update` costs a clock read and returns at once between redraws.
 */
import { performance } from 'node:perf_hooks';
import { formatSize } from './format-bytes.js';
import type { TextSink } from './output.js';

export type ProgressMode = 'bar' | 'lines' | 'none';

export interface ProgressTiming {
  /** Nothing shows before this much time has passed. @defaultValue 500 (bar), 2000 (lines) */
  delayMs?: number;
  /** A bar is redrawn at most this often. @defaultValue 100 */
  everyMs?: number;
  /** Lines of work without a total come this often. @defaultValue 5000 */
  lineEveryMs?: number;
  /** The clock (tests). @defaultValue performance.now */
  now?: () => number;
}

/**
 * The mode the bin uses: `SIEVEKV_PROGRESS` (`bar`, `lines`, `none`) if set, else a bar when
 * stderr is a terminal and lines when it is not.
 */
export function progressMode(env: string | undefined, stderrIsTTY: boolean): ProgressMode {
  if (env === 'bar' || env === 'lines' || env === 'none') return env;
  if (env === 'off' || env === '0') return 'none';
  return stderrIsTTY ? 'bar' : 'lines';
}

/** How a quantity prints: bytes as sizes, counts as numbers with a unit. */
export type ProgressUnit = 'bytes' | { readonly one: string; readonly many: string };

const BAR_WIDTH = 24;

export class Progress {
  readonly #sink: TextSink;
  readonly #mode: ProgressMode;
  readonly #label: string;
  readonly #unit: ProgressUnit;
  readonly #now: () => number;
  readonly #start: number;
  readonly #delayMs: number;
  readonly #everyMs: number;
  readonly #lineEveryMs: number;
  #lastDraw = -Infinity;
  /** The tenth of the way last reported as a line (lines mode). */
  #lastTenth = -1;
  #linesWritten = 0;
  #barShown = false;
  #done = 0;
  #total: number | undefined;
  #detail = '';

  constructor(sink: TextSink, mode: ProgressMode, label: string, unit: ProgressUnit, timing: ProgressTiming = {}) {
    this.#sink = sink;
    this.#mode = mode;
    this.#label = label;
    this.#unit = unit;
    this.#now = timing.now ?? (() => performance.now());
    this.#start = this.#now();
    this.#delayMs = timing.delayMs ?? (mode === 'bar' ? 500 : 2000);
    this.#everyMs = timing.everyMs ?? 100;
    this.#lineEveryMs = timing.lineEveryMs ?? 5000;
  }

  /** `done` of `total` (undefined: not known), with an optional word on where it is. */
  update(done: number, total?: number, detail = ''): void {
    if (this.#mode === 'none') return;
    this.#done = done;
    this.#total = total;
    this.#detail = detail;
    const now = this.#now();
    if (now - this.#start < this.#delayMs) return;
    if (this.#mode === 'bar') {
      if (now - this.#lastDraw < this.#everyMs) return;
      this.#lastDraw = now;
      this.#sink.write(`\r${this.#barText()}\x1b[K`);
      this.#barShown = true;
      return;
    }
    if (total !== undefined && total > 0) {
      const tenth = Math.min(9, Math.floor((done / total) * 10));
      if (tenth <= this.#lastTenth) return;
      this.#lastTenth = tenth;
    } else if (now - this.#lastDraw < this.#lineEveryMs) {
      return;
    }
    this.#lastDraw = now;
    this.#writeLine();
  }

  /**
   * Ends the display: clears the bar; in line mode, a last line if any came before, with the
   * final figures when given (else the last ones, the total reached).
   */
  finish(done?: number, detail?: string): void {
    if (done !== undefined) this.#done = done;
    if (detail !== undefined) this.#detail = detail;
    if (this.#mode === 'bar' && this.#barShown) {
      this.#sink.write('\r\x1b[K');
      this.#barShown = false;
    } else if (this.#mode === 'lines' && this.#linesWritten > 0) {
      if (this.#total !== undefined) this.#done = this.#total;
      this.#writeLine(true);
    }
  }

  #amount(n: number): string {
    if (this.#unit === 'bytes') return formatSize(n);
    return `${n.toLocaleString('en-US')} ${n === 1 ? this.#unit.one : this.#unit.many}`;
  }

  #fraction(): number | undefined {
    const total = this.#total;
    if (total === undefined || total <= 0) return undefined;
    return Math.max(0, Math.min(1, this.#done / total));
  }

  #figures(): string {
    const total = this.#total;
    const amounts = total === undefined ? this.#amount(this.#done) : `${this.#amount(this.#done)} of ${this.#amount(total)}`;
    return this.#detail === '' ? amounts : `${amounts}, ${this.#detail}`;
  }

  #barText(): string {
    const f = this.#fraction();
    const seconds = `${Math.round((this.#now() - this.#start) / 1000)}s`;
    if (f === undefined) return `${this.#label}: ${this.#figures()} (${seconds})`;
    const filled = Math.round(f * BAR_WIDTH);
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`;
    return `${this.#label} ${bar} ${String(Math.floor(f * 100)).padStart(3)}% ${this.#figures()} (${seconds})`;
  }

  #writeLine(last = false): void {
    const f = this.#fraction();
    const head = last ? 'done' : f === undefined ? 'at' : `${Math.floor(f * 100)}%`;
    this.#sink.write(`sievekv: ${this.#label}: ${head} (${this.#figures()})\n`);
    this.#linesWritten++;
  }
}
