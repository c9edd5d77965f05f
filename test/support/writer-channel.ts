/**
 * A writer child (test/db/read-only-writer.ts) and its command channel, for the tests that read a
 * database another process holds open (the read-only open, the CLI on a live database).
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach } from 'vitest';
import { writerKey, writerValue } from '../db/read-only-writer.js';
import { startWriterChild, type CrashChild } from './crash-child.js';

const WRITER = fileURLToPath(new URL('../db/read-only-writer.ts', import.meta.url));

/**
 * The writer children and temporary directories of one test file, cleaned up for it: each test's
 * children are killed (if still running) and awaited after it, the directories removed at the end.
 */
export function writerCleanup(): { children: CrashChild[]; temp: string[] } {
  const children: CrashChild[] = [];
  const temp: string[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) {
      if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
      await c.exited;
    }
  });
  afterAll(() => {
    for (const d of temp) rmSync(d, { recursive: true, force: true });
  });
  return { children, temp };
}

export class Writer {
  /** What the writer has acknowledged, key → value. */
  readonly model = new Map<string, string>();
  #sent = 0;
  private constructor(readonly child: CrashChild) {}

  /** Starts a writer on `dir`, recorded in `children` (for the test's cleanup), once it has opened. */
  static async start(dir: string, children: CrashChild[]): Promise<Writer> {
    const child = startWriterChild(WRITER, [dir]);
    children.push(child);
    await child.opened;
    if (child.proc.exitCode !== null) throw new Error(`writer failed to open: ${child.stderr.join('')}`);
    return new Writer(child);
  }

  /** Sends `line`; resolves once the writer acknowledged it (and the model follows it). */
  async command(line: string): Promise<void> {
    const want = ++this.#sent;
    this.child.proc.stdin!.write(`${line}\n`);
    const deadline = Date.now() + 120_000;
    while (this.child.acked.length < want) {
      if (this.child.proc.exitCode !== null) throw new Error(`writer exited on "${line}": ${this.child.stderr.join('')}`);
      if (Date.now() > deadline) throw new Error(`writer did not acknowledge "${line}"`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const [op, a, b, tag] = line.split(' ');
    for (let i = Number(a); i < Number(b); i++) {
      if (op === 'put') this.model.set(writerKey(i), writerValue(tag!, i));
      else if (op === 'del') this.model.delete(writerKey(i));
    }
  }

  async close(): Promise<void> {
    await this.command('close');
    await this.child.exited;
  }
}
