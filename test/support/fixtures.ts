import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** test/fixtures: LevelDB-made files committed with the tests (see test/fixtures/README.md). */
export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

export function fixturePath(...parts: string[]): string {
  return join(FIXTURES, ...parts);
}

export function readJsonLines<T>(...parts: string[]): T[] {
  return readFileSync(fixturePath(...parts), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}
