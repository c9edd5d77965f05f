/**
 * Runs abstract-level's own test suite (`abstract-level/test`, on tape) against SieveLevel and
 * collects tape's results: tests, assertions passed and failed, and the failures' names.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SieveLevel, type SieveLevelOptions } from '../../src/level/index.js';

const require = createRequire(import.meta.url);

/** From the empty key to one above every key the suite writes (UTF-8 and its bytes never hold 0xff). */
const EVERY_KEY = [Buffer.alloc(0), Buffer.alloc(16, 0xff)] as never as [string, string];

interface TapeRow {
  type: 'test' | 'assert' | 'end';
  name?: string;
  ok?: boolean;
  operator?: string;
  actual?: unknown;
  expected?: unknown;
  error?: unknown;
}

interface TapeHarness {
  (name: string, fn: (t: unknown) => unknown): void;
  createStream(options: { objectMode: true }): { on(event: 'data', listener: (row: TapeRow) => void): void };
  onFinish(listener: () => void): void;
}

export interface SuiteResult {
  tests: number;
  passed: number;
  failed: number;
  /** "test name: assertion name (operator)" for each failed assertion. */
  failures: string[];
  seconds: number;
  /** Summed over the databases the suite opened (from `sievekv.stats` at each close). */
  engine: { opens: number; flushes: number; compactions: number; blocksRead: number };
}

/** Runs the whole suite (and its second pass on a sublevel) with `options` for every database. */
export async function runAbstractLevelSuite(options: SieveLevelOptions, through: 'memtable' | 'tables' = 'memtable'): Promise<SuiteResult> {
  const tape = require('tape') as { createHarness(): TapeHarness };
  const suite = require('abstract-level/test') as (o: { test: TapeHarness; factory: (o?: object) => unknown }) => void;
  const root = mkdtempSync(join(tmpdir(), 'sievekv-level-suite-'));
  const started = performance.now();
  const result: SuiteResult = { tests: 0, passed: 0, failed: 0, failures: [], seconds: 0, engine: { opens: 0, flushes: 0, compactions: 0, blocksRead: 0 } };
  const engine = result.engine;
  try {
    const test = tape.createHarness();
    let current = '';
    test.createStream({ objectMode: true }).on('data', (row) => {
      if (row.type === 'test') {
        result.tests++;
        current = row.name ?? '';
      } else if (row.type === 'assert') {
        if (row.ok === true) {
          result.passed++;
        } else {
          result.failed++;
          const detail = row.error instanceof Error ? ` ${row.error.message}` : ` actual ${String(row.actual)}, expected ${String(row.expected)}`;
          result.failures.push(`${current}: ${row.name ?? ''} (${row.operator ?? ''})${detail}`);
        }
      }
    });
    const finished = new Promise<void>((resolve) => test.onFinish(resolve));
    // sievekv's options go in at _open rather than through the constructor: the suite checks that
    // a postopen hook receives exactly the options the test gave.
    // Each close adds what the database did to `engine`, to show where the calls went.
    class Configured extends SieveLevel {
      override async _open(given: Record<string, unknown>): Promise<void> {
        await super._open({ ...options, ...given });
        engine.opens++;
      }

      override async _close(): Promise<void> {
        const stats = JSON.parse(this.getProperty('sievekv.stats') ?? '{}') as {
          flushes?: number;
          blocksRead?: number;
          levels?: { compactions?: number }[];
        };
        engine.flushes += stats.flushes ?? 0;
        engine.blocksRead += stats.blocksRead ?? 0;
        for (const l of stats.levels ?? []) engine.compactions += l.compactions ?? 0;
        await super._close();
      }

      // With `through: 'tables'`, every write is flushed and compacted before it resolves, so the
      // reads after it find their data in tables (and iterators opened before it keep reading the
      // tables they pinned).
      override async _put(...args: Parameters<SieveLevel['_put']>): Promise<void> {
        await super._put(...args);
        await this.#toTables();
      }

      override async _del(...args: Parameters<SieveLevel['_del']>): Promise<void> {
        await super._del(...args);
        await this.#toTables();
      }

      override async _batch(...args: Parameters<SieveLevel['_batch']>): Promise<void> {
        await super._batch(...args);
        await this.#toTables();
      }

      override async _clear(...args: Parameters<SieveLevel['_clear']>): Promise<void> {
        await super._clear(...args);
        await this.#toTables();
      }

      override _chainedBatch(): ReturnType<SieveLevel['_chainedBatch']> {
        const batch = super._chainedBatch();
        const write = batch._write.bind(batch);
        batch._write = async (o) => {
          await write(o);
          await this.#toTables();
        };
        return batch;
      }

      async #toTables(): Promise<void> {
        if (through === 'tables') await this.compactRange(EVERY_KEY[0], EVERY_KEY[1], { keyEncoding: 'buffer' } as never);
      }
    }
    let n = 0;
    suite({ test, factory: (o?: object) => new Configured(join(root, `db-${n++}`), o) });
    await finished;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  result.seconds = (performance.now() - started) / 1000;
  return result;
}
