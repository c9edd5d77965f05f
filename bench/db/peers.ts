/**
 * Loads the peer engines that live outside sievekv's dependencies, in bench/peers (its own
 * package.json and lock file; `npm --prefix bench/peers install`). They are native modules that
 * CI must neither download nor build, so nothing else imports them: a missing peer is reported
 * and its columns are skipped.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** bench/peers of this checkout, found from this file whether it runs from bench/ or dist/bench/. */
export const PEERS_DIR: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'bench', 'peers');
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return join(process.cwd(), 'bench', 'peers');
    dir = parent;
  }
})();

/** The checkout's root (holds package.json and bench/). */
export const REPO_DIR: string = dirname(dirname(PEERS_DIR));

const peerRequire = createRequire(join(PEERS_DIR, 'package.json'));

/** True if `name` is installed in bench/peers. */
export function peerInstalled(name: string): boolean {
  try {
    peerRequire.resolve(name);
    return true;
  } catch {
    return false;
  }
}

/** The module `name` from bench/peers/node_modules, or null if it is not installed there. */
export function loadPeer<T>(name: string): T | null {
  return peerInstalled(name) ? (peerRequire(name) as T) : null;
}

/** The installed version of a package in bench/peers (or "?"), read from its package.json. */
export function peerVersion(name: string): string {
  const text = peerFile(name, 'package.json');
  return text === null ? '?' : (JSON.parse(text) as { version: string }).version;
}

/**
 * A file inside an installed peer package, or null: for versions the package does not export
 * (some packages' `exports` hide even their package.json from require.resolve).
 */
export function peerFile(name: string, relative: string): string | null {
  const path = join(PEERS_DIR, 'node_modules', name, relative);
  return existsSync(path) ? readFileSync(path, 'utf8') : null;
}
