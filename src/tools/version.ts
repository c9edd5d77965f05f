/**
 * The version `sievekv --version` prints: the `version` of sievekv's own package.json, found by
 * walking up from this file (src/tools/ when run from source, dist/src/tools/ when built or
 * installed). Not database I/O, so read with node:fs directly.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const path = join(dir, 'package.json');
    if (existsSync(path)) {
      const pkg = JSON.parse(readFileSync(path, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'sievekv' && typeof pkg.version === 'string') return pkg.version;
    }
    const up = dirname(dir);
    if (up === dir) return 'unknown';
    dir = up;
  }
}
