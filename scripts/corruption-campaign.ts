/**
 * `npm run corruption-campaign -- [--minutes N] [--cases N] [--seed N] [--case N] [--sweeps] [--trace FILE]`:
 * the database corruption campaign (scripts/corruption/campaign.ts) as a standalone tool, for runs
 * longer than CI's (test/db/corruption-db.test.ts runs a fixed seed and a few hundred cases).
 *
 * Random damage — flips, zeroed ranges, truncations, appended bytes, at random and at record,
 * block and footer boundaries of CURRENT, the MANIFEST, every table, the WAL and REGIONS — on a
 * plain and a sharded database, each opened with paranoidChecks on and off and read in full.
 * `--sweeps` first runs the deterministic sets too (every file removed; the MANIFEST and WAL cut at
 * every record). Prints progress every 30 s, each failure as it is found (seed, case, the exact
 * damage and what went wrong), and a summary; exits 1 if anything failed.
 *
 * The seed: `--seed`, else SIEVEKV_SEED or SIEVE_SEED, else a fixed one. `--case N` replays case N
 * of that seed alone. `--trace FILE` writes each case to FILE before it runs (synchronously), so a
 * hang names its case.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { buildImages, cutCases, describeCase, formatSummary, randomCases, removalCases, runCases, type PlannedCase } from './corruption/campaign.js';

const DEFAULT_SEED = 0x5eed_2026;

const { values } = parseArgs({
  options: {
    minutes: { type: 'string' },
    cases: { type: 'string' },
    seed: { type: 'string' },
    case: { type: 'string' },
    sweeps: { type: 'boolean', default: false },
    trace: { type: 'string' },
  },
});

function intOption(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw new Error(`${name} must be an integer, got ${raw}`);
  return n;
}

const seed = (intOption(values.seed, '--seed') ?? intOption(process.env.SIEVEKV_SEED, 'SIEVEKV_SEED') ?? intOption(process.env.SIEVE_SEED, 'SIEVE_SEED') ?? DEFAULT_SEED) | 0;
const only = intOption(values.case, '--case');
const minutes = Number(values.minutes ?? (values.cases === undefined && only === undefined ? 10 : Infinity));
const count = only !== undefined ? 1 : (intOption(values.cases, '--cases') ?? Number.MAX_SAFE_INTEGER);

console.log(`corruption campaign: seed ${seed}${only !== undefined ? `, case ${only}` : ''}, ${Number.isFinite(minutes) ? `${minutes} min` : ''}${count < Number.MAX_SAFE_INTEGER ? ` ${count} cases` : ''}`);
const built = Date.now();
const images = await buildImages(seed);
for (const image of images) {
  console.log(`  ${image.name}: ${image.files.length} files, files per level ${image.levels.join('/')}, ${image.expected.size} keys, ${image.walBatches.length} WAL batches`);
}
console.log(`  built in ${Date.now() - built} ms`);

function* all(): Generator<PlannedCase> {
  if (values.sweeps && only === undefined) {
    yield* removalCases(images);
    yield* cutCases(images, 'manifest');
    yield* cutCases(images, 'wal');
  }
  yield* randomCases(images, seed, only ?? 0, count);
}

const started = Date.now();
let lastProgress = started;
let runs = 0;
let failures = 0;
const summary = await runCases(all(), {
  maxMs: minutes * 60_000,
  onStart: (c, paranoid) => {
    if (values.trace !== undefined) writeFileSync(values.trace, `${describeCase(seed, { ...c, paranoidChecks: paranoid })}\n`);
  },
  onCase: (c) => {
    runs++;
    if (c.outcome.kind === 'failure') {
      failures++;
      console.log(`FAILURE ${describeCase(seed, c)}\n  ${c.outcome.detail.replace(/\n/g, '\n  ')}`);
    } else if (only !== undefined) {
      console.log(`${describeCase(seed, c)}\n  → ${c.outcome.kind} ${c.outcome.detail}`);
    }
    if (Date.now() - lastProgress > 30_000) {
      lastProgress = Date.now();
      console.log(`  … ${((lastProgress - started) / 60_000).toFixed(1)} min: ${runs} runs, ${failures} failures`);
    }
  },
});
console.log(formatSummary(summary));
process.exitCode = summary.failures.length > 0 ? 1 : 0;
