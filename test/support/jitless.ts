/**
 * Runs a TypeScript module snippet (run from the repository's root, so `./src/...` imports
 * resolve) in a child `node --jitless`: a Node whose WebAssembly is off, for the paths that
 * fall back to lz4-napi. The snippet prints one JSON line; returns it parsed, after checking the
 * child exited 0 with nothing on stderr but V8's warning that --jitless turns WebAssembly off.
 */
import { spawnSync } from 'node:child_process';
import { expect } from 'vitest';

export function runWithoutWebAssembly(script: string): unknown {
  const child = spawnSync(process.execPath, ['--jitless', '--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    cwd: new URL('../..', import.meta.url).pathname,
  });
  expect({ status: child.status, stderr: child.stderr.replace(/^Warning: disabling flag --expose_wasm.*\n/m, '') }).toEqual({ status: 0, stderr: '' });
  return JSON.parse(child.stdout.trim());
}
