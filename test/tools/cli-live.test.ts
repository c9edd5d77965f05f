/**
 * The CLI on a database another process holds open (test/db/read-only-writer.ts, a child that
 * writes, flushes and compacts): get, scan, stats and verify read it — without the lock and
 * without one write of any kind (they run on a file system that refuses every writing call) —
 * and see exactly what the writer acknowledged; put, del, compact, checkpoint and repair stop at
 * once with one LOCKED line naming the writer's process, exit 1. While the writer keeps writing
 * and compacting, verify still finds the database healthy and scan reads a consistent state.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FileLock, WritableFile } from '../../src/fs/file-system.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';
import { writerKey, writerValue } from '../db/read-only-writer.js';
import { Writer, writerCleanup } from '../support/writer-channel.js';
import { jsonLines, runCli } from './cli-support.js';


const { children, temp } = writerCleanup();

/** The real file system, refusing every call that would write or lock. */
class NoWritesFileSystem extends NodeFileSystem {
  readonly refused: string[] = [];
  #refuse(op: string, path: string): never {
    this.refused.push(`${op} ${path}`);
    throw new Error(`the CLI tried to ${op} ${path}`);
  }
  override createWritable(path: string): WritableFile {
    return this.#refuse('create', path);
  }
  override openAppendable(path: string): WritableFile {
    return this.#refuse('append to', path);
  }
  override mkdir(dir: string): void {
    this.#refuse('mkdir', dir);
  }
  override rename(from: string): void {
    this.#refuse('rename', from);
  }
  override link(from: string): void {
    this.#refuse('link', from);
  }
  override remove(path: string): void {
    this.#refuse('remove', path);
  }
  override syncDir(dir: string): void {
    this.#refuse('sync', dir);
  }
  override lock(path: string): FileLock {
    return this.#refuse('lock', path);
  }
}

const hex = (s: string): string => Buffer.from(s).toString('hex');
const sortedHex = (model: Map<string, string>): [string, string][] => [...model].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [hex(k), hex(v)]);

describe('the CLI on a database another process holds open', () => {
  it('get, scan, stats and verify read it without a lock or a write; the writing commands say LOCKED', async () => {
    const root = mkdtempSync(join(tmpdir(), 'sievekv-cli-live-'));
    temp.push(root);
    const dir = join(root, 'db');
    const writer = await Writer.start(dir, children);
    await writer.command('put 0 3000 a');
    await writer.command('compact');
    await writer.command('put 2500 3400 b');
    await writer.command('del 0 100');
    const fs = new NoWritesFileSystem();

    expect(await runCli(['get', dir, writerKey(200)], fs)).toEqual({ code: 0, stdout: `${writerValue('a', 200)}\n`, stderr: '' });
    expect(await runCli(['get', dir, writerKey(3000)], fs)).toEqual({ code: 0, stdout: `${writerValue('b', 3000)}\n`, stderr: '' });
    expect((await runCli(['get', dir, writerKey(50)], fs)).code).toBe(1);
    const scan = await runCli(['scan', '--json', dir], fs);
    expect(scan.code).toBe(0);
    expect(jsonLines(scan.stdout).map((l) => [l.key, l.value])).toEqual(sortedHex(writer.model));
    const stats = await runCli(['stats', dir], fs);
    expect(stats.code).toBe(0);
    expect(stats.stdout).toMatch(/^ +\d+ +[1-9]\d* +\d+\.\d\d /m);
    const json = jsonLines((await runCli(['stats', '--json', dir], fs)).stdout)[0]!;
    expect(json.lastSequence).toBe(3000 + 900 + 100);
    const verify = await runCli(['verify', dir], fs);
    expect(verify.stderr).toBe('');
    expect(verify.stdout).toMatch(/\nOK: no damage found\n$/);
    expect(verify.code).toBe(0);
    expect(fs.refused).toEqual([]);

    const pid = writer.child.proc.pid!;
    const locked = new RegExp(`^sievekv: LOCKED: ${dir}: the database is already open: its lock is held by process ${pid}\\b[^\\n]*\\(get, scan, stats and verify read it while it is open\\)\\n$`);
    for (const argv of [
      ['put', dir, 'k', 'v'],
      ['del', dir, writerKey(1)],
      ['compact', dir],
      ['checkpoint', dir, join(root, 'copy')],
    ]) {
      const r = await runCli(argv);
      expect(r.code, argv[0]).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(locked);
    }
    const repair = await runCli(['repair', dir]);
    expect(repair.code).toBe(1);
    expect(repair.stderr).toMatch(new RegExp(`^sievekv: LOCKED: ${dir}: the database is already open: its lock is held by process ${pid}\\b[^\\n]*\\n$`));

    // While the writer writes, flushes and compacts: verify stays healthy, and each scan reads one
    // state the writer was in: the state before a round, with that round's first batches of 50
    // keys (keys 0..m-1) written over it.
    const before: Map<string, string>[] = [];
    const busy = (async () => {
      for (let round = 0; round < 4; round++) {
        before.push(new Map(writer.model));
        await writer.command(`put 0 3400 c${round}`);
        await writer.command('compact');
      }
    })();
    let verifies = 0;
    let done = false;
    void busy.finally(() => (done = true));
    while (!done) {
      const v = await runCli(['verify', dir], fs);
      expect(v.stdout.split('\n').filter((l) => l.startsWith('problem:'))).toEqual([]);
      expect(v.code).toBe(0);
      const s = await runCli(['scan', '--json', dir], fs);
      expect(s.stderr).toBe('');
      expect(s.code).toBe(0);
      const seen = new Map(jsonLines(s.stdout).map((l) => [Buffer.from(l.key as string, 'hex').toString(), Buffer.from(l.value as string, 'hex').toString()]));
      const rounds = [...seen.values()].map((value) => /^c(\d)-/.exec(value)).filter((m) => m !== null).map((m) => Number(m[1]));
      const round = rounds.length === 0 ? 0 : Math.max(...rounds);
      const newest = [...seen].filter(([, value]) => value.startsWith(`c${round}-`)).map(([k]) => k);
      const m = newest.length;
      expect(m % 50 === 0 || m === 3400).toBe(true);
      expect(newest.sort()).toEqual(Array.from({ length: m }, (_, i) => writerKey(i)));
      const expected = new Map(before[round] ?? writer.model);
      for (let i = 0; i < m; i++) expected.set(writerKey(i), writerValue(`c${round}`, i));
      expect(seen).toEqual(expected);
      verifies++;
      // The commands above are synchronous underneath: let the writer's acks in.
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await busy;
    expect(verifies).toBeGreaterThan(0);
    expect(fs.refused).toEqual([]);
    const final = await runCli(['scan', '--json', dir], fs);
    expect(jsonLines(final.stdout).map((l) => [l.key, l.value])).toEqual(sortedHex(writer.model));
    await writer.command('close');
    await writer.child.exited;
  });
});
