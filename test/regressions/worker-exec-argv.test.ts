/**
 * Issue 9, item 12: the compaction worker inherited the program's execArgv. A program run as
 * `node --input-type=module -e '…'` got ERR_INPUT_TYPE_NOT_ALLOWED from every flush (a worker
 * refuses that flag), latched as "IO_ERROR: background write failed": the database took no more
 * writes. Likewise a preload (`--import`) that will not run on a worker thread. The worker now
 * starts with the flags it needs, none of the program's.
 *
 * The children run the package as it ships (src/ transpiled to JavaScript in a temporary
 * directory: the worker is then worker.js, started as a file — the case that failed), and from
 * the TypeScript sources under tsx (the worker then bootstraps tsx itself).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let built = '';

/** src/ as JavaScript modules beside a package.json of type module and the repository's node_modules. */
function transpileSources(): string {
  const out = mkdtempSync(join(tmpdir(), 'sievekv-built-'));
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        const js = ts.transpileModule(readFileSync(path, 'utf8'), {
          compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
          fileName: path,
        }).outputText;
        const target = join(out, relative(ROOT, path)).replace(/\.ts$/, '.js');
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, js);
      }
    }
  };
  walk(join(ROOT, 'src'));
  writeFileSync(join(out, 'package.json'), JSON.stringify({ type: 'module' }));
  symlinkSync(join(ROOT, 'node_modules'), join(out, 'node_modules'), 'dir');
  return out;
}

beforeAll(() => {
  built = transpileSources();
});
afterAll(() => rmSync(built, { recursive: true, force: true }));

/** Writes enough to flush and compact, closes, reopens, checks every key, writes again. */
function childScript(entry: string): string {
  return `
import { DB } from ${JSON.stringify(entry)};
const dir = process.env.SIEVEKV_TEST_DIR;
const N = 3000;
const key = (i) => 'key' + String(i).padStart(6, '0');
const value = (i) => 'value-' + i + '-'.repeat(80);
let db = await DB.open(dir, { writeBufferSize: 16 * 1024 });
for (let i = 0; i < N; i++) await db.put(key(i), value(i));
await db.compactRange();
await db.close();
db = await DB.open(dir, { writeBufferSize: 16 * 1024 });
let missing = 0;
for (let i = 0; i < N; i++) if ((await db.get(key(i)))?.toString() !== value(i)) missing++;
await db.put('after-reopen', 'yes');
await db.close();
console.log(JSON.stringify({ missing }));
`;
}

/** A preload that refuses to run on a worker thread (as some agents and servers do). */
const WORKER_HOSTILE_PRELOAD =
  'data:text/javascript,import{isMainThread}from"node:worker_threads";if(!isMainThread)throw new Error("this preload refuses worker threads")';

function runChild(args: string[], dir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, args, { env: { ...process.env, SIEVEKV_TEST_DIR: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    proc.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    proc.on('error', reject);
    proc.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const CASES: [string, (dir: string) => string[]][] = [
  ['node --input-type=module -e (the package as built)', () => ['--input-type=module', '-e', childScript(pathToFileURL(join(built, 'src/index.js')).href)]],
  [
    'node --import <a preload refusing worker threads> --input-type=module -e (as built)',
    () => ['--import', WORKER_HOSTILE_PRELOAD, '--input-type=module', '-e', childScript(pathToFileURL(join(built, 'src/index.js')).href)],
  ],
  [
    'node --import tsx --import <that preload> --input-type=module -e (TypeScript sources)',
    () => ['--import', 'tsx', '--import', WORKER_HOSTILE_PRELOAD, '--input-type=module', '-e', childScript(pathToFileURL(join(ROOT, 'src/index.ts')).href)],
  ],
];

describe("the background worker does not inherit the program's flags (issue 9, item 12)", () => {
  for (const [name, args] of CASES) {
    it(`${name}: flushes and compactions work, every write is there after reopen`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sievekv-execargv-'));
      onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
      const { code, stdout, stderr } = await runChild(args(dir), dir);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(JSON.parse(stdout.trim())).toEqual({ missing: 0 });
      const log = readFileSync(join(dir, 'LOG'), 'utf8') + readFileSync(join(dir, 'LOG.old'), 'utf8');
      expect(log).toMatch(/flushed region 0/);
      expect(log).toMatch(/compacted region 0/);
      // On the worker, not the fallback: the worker started.
      expect(log).not.toMatch(/could not start/);
      expect(log).not.toMatch(/background error latched/);
    });
  }
});
