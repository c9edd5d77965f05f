/**
 * Node defines `Buffer`, `performance`, `process`, `TextEncoder` and `TextDecoder` on the global
 * object as getters, and V8 calls the getter at every use: `Buffer.allocUnsafe(16)` took 35-40 ns
 * through the global and 21-25 ns through `import { Buffer } from 'node:buffer'` (Node 20), and
 * a scan makes two Buffers per entry. So every source file that uses one of them as a value
 * imports it from its module. This test reads src/ and names any file that does not.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../../src');

/** The accessor globals: how a use as a value looks, and the import that must be there instead. */
const GLOBALS = [
  { name: 'Buffer', use: /(?<![\w.$])Buffer\s*(?:\.\s*\w|\()|instanceof\s+Buffer\b/, imported: /import\s*\{[^}]*\bBuffer\b[^}]*\}\s*from\s*'node:buffer'/ },
  { name: 'performance', use: /(?<![\w.$])performance\s*\./, imported: /import\s*\{[^}]*\bperformance\b[^}]*\}\s*from\s*'node:perf_hooks'/ },
  { name: 'process', use: /(?<![\w.$])process\s*\./, imported: /import\s+process\s+from\s*'node:process'/ },
  { name: 'TextEncoder', use: /\bnew\s+TextEncoder\b/, imported: /import\s*\{[^}]*\bTextEncoder\b[^}]*\}\s*from\s*'node:util'/ },
  { name: 'TextDecoder', use: /\bnew\s+TextDecoder\b/, imported: /import\s*\{[^}]*\bTextDecoder\b[^}]*\}\s*from\s*'node:util'/ },
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/**
 * The code without comments and quoted strings, so a mention in prose is not a use. Template
 * literals are kept whole: their `${…}` parts are code.
 */
function codeOf(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/[^\n]*/g, '')
    .replace(/'(?:[^'\\\n]|\\.)*'/g, "''");
}

/** The text without comments (an import written in one does not count). */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
}

/** Each accessor global `text` uses as a value without importing it. */
function unimportedGlobals(text: string): string[] {
  const code = codeOf(text);
  const imports = withoutComments(text);
  return GLOBALS.filter((g) => g.use.test(code) && !g.imported.test(imports)).map((g) => g.name);
}

describe('accessor globals', () => {
  it('are told apart: a use without its import is found, prose and types are not uses', () => {
    expect(unimportedGlobals('const b = Buffer.allocUnsafe(4);')).toEqual(['Buffer']);
    expect(unimportedGlobals("import { Buffer } from 'node:buffer';\nconst b = Buffer.allocUnsafe(4);")).toEqual([]);
    expect(unimportedGlobals('const t = performance.now(); const e = new TextEncoder();')).toEqual(['performance', 'TextEncoder']);
    expect(unimportedGlobals("import process from 'node:process';\nprocess.env.X;")).toEqual([]);
    expect(unimportedGlobals('/** Buffer.from(s) */ let b: Buffer; // performance.now()')).toEqual([]);
    expect(unimportedGlobals("const s = 'new TextDecoder()';")).toEqual([]);
    expect(unimportedGlobals('const s = `pid ${process.pid}`;')).toEqual(['process']);
    expect(unimportedGlobals("// import { Buffer } from 'node:buffer';\nconst b = Buffer(4);")).toEqual(['Buffer']);
  });

  it('are imported by every source file that uses them', () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(50);
    const missing = files
      .map((f) => ({ file: relative(SRC, f), names: unimportedGlobals(readFileSync(f, 'utf8')) }))
      .filter((m) => m.names.length > 0);
    expect(missing).toEqual([]);
  });
});
