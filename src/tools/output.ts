/**
 * Where the CLI's text goes. `main` takes a `CliIO` so that tests run it in-process and collect
 * what it writes; the bin passes `process.stdout` / `process.stderr`.
 *
 * `LineWriter` buffers lines and hands them to the sink in chunks of about 64 KiB: a dump writes
 * one line per entry, and one `write` call per line would cost more than formatting it.
 * Call `flush()` before returning (main does, on every path).
 */
import type { ProgressMode, ProgressTiming } from './progress.js';

/** Anything with a `write(text)`: a Node stream, or a test's collector. */
export interface TextSink {
  write(chunk: string): unknown;
}

export interface CliIO {
  stdout: TextSink;
  stderr: TextSink;
  /**
   * How long work shows its progress on stderr (progress.ts): a bar redrawn in place, a line now
   * and then, or nothing. The bin picks by whether stderr is a terminal. @defaultValue 'none'
   */
  progress?: ProgressMode;
  /** When progress shows (tests make it show at once). */
  progressTiming?: ProgressTiming;
  /** stdout is a terminal (a scan then shows no progress). @defaultValue false */
  stdoutIsTTY?: boolean;
}

const CHUNK = 64 * 1024;

export class LineWriter {
  readonly #sink: TextSink;
  #parts: string[] = [];
  #size = 0;

  constructor(sink: TextSink) {
    this.#sink = sink;
  }

  /** Writes `text` and a newline. */
  line(text = ''): void {
    this.#parts.push(text, '\n');
    this.#size += text.length + 1;
    if (this.#size >= CHUNK) this.flush();
  }

  /** Writes one JSON Lines record. */
  json(value: unknown): void {
    this.line(JSON.stringify(value));
  }

  flush(): void {
    if (this.#parts.length === 0) return;
    const text = this.#parts.join('');
    this.#parts = [];
    this.#size = 0;
    this.#sink.write(text);
  }
}
