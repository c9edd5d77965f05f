/**
 * The database-level corruption campaign (issue 9; STYLE.md §14), run with a fixed seed in CI.
 *
 * Two databases are built on a MemFileSystem (scripts/corruption/image.ts): a plain one and one
 * sharded by DezhouKV's router (lz4, whole-table filters), each with data on several levels,
 * overwrites and deletes, a compactRange of everything, and a 40-batch tail of synced writes that
 * lives only in the WAL (which spans several 32 KiB log blocks). Each case damages one file of a
 * fresh copy — CURRENT, the MANIFEST, a table, the WAL, REGIONS — opens it with paranoidChecks on
 * and off, and reads everything: `get` of every key ever written and of some never written, a
 * full scan forwards and one backwards. The outcome must be the exact contents, or a typed
 * SieveError at open or at a read (after which the undamaged file, put back, opens exact: nothing
 * was destroyed), or — for the WAL only — the loss scripts/corruption/campaign.ts allows: a
 * suffix of the newest WAL's batches (what a crash leaves; counted in `walTornBytes` unless the
 * file was merely cut), or with paranoidChecks off one contiguous run of whole batches, counted
 * in `walRecordsSkipped`. Never a crash, a missing key, a wrong value or an extra key without an
 * error; and a database that opened shows the same contents on the next open.
 *
 * The seed is SIEVEKV_SEED or SIEVE_SEED (test/support/seed.ts), printed with every failure and
 * the exact damage. SIEVE_CAMPAIGN_CASES raises the random cases (CI: 160, each run twice); for
 * long runs use `npm run corruption-campaign -- --minutes 10 --sweeps`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildImages,
  type CampaignSummary,
  cutCases,
  describeCase,
  formatSummary,
  randomCases,
  removalCases,
  runCases,
  type PlannedCase,
} from '../../scripts/corruption/campaign.js';
import type { DatabaseImage } from '../../scripts/corruption/image.js';
import { testSeed } from '../support/seed.js';

function campaignSeed(): number {
  const raw = process.env.SIEVEKV_SEED;
  if (raw === undefined || raw === '') return testSeed();
  const seed = Number(raw);
  if (!Number.isInteger(seed)) throw new Error(`SIEVEKV_SEED must be an integer, got ${raw}`);
  return seed | 0;
}

const seed = campaignSeed();
const randomCount = Number(process.env.SIEVE_CAMPAIGN_CASES ?? 160);
// Cases take 20–50 ms a run on a shared 2-core machine; a long run gets the time it needs.
const randomTimeout = Math.max(120_000, randomCount * 2 * 250);

let images: DatabaseImage[];

beforeAll(async () => {
  images = await buildImages(seed);
  console.log(
    `corruption campaign: seed ${seed} (replay: SIEVEKV_SEED=${seed}); ` +
      images.map((i) => `${i.name}: ${i.files.length} files, per level ${i.levels.join('/')}, ${i.walBatches.length} WAL batches`).join('; '),
  );
  // The images must be what the campaign is meant to damage.
  for (const image of images) {
    expect(image.levels.filter((n) => n > 0).length, `${image.name}: levels holding files`).toBeGreaterThanOrEqual(3);
    expect(image.walBatches.length, `${image.name}: WAL batches`).toBe(40);
    expect(Math.max(...image.files.filter((f) => f.role === 'wal').map((f) => f.bytes.length)), `${image.name}: WAL spans log blocks`).toBeGreaterThan(2 * 32768);
  }
}, 60_000);

/** Runs `cases`, prints the summary, and fails listing every failure (seed, case, damage, what). */
async function campaign(what: string, cases: Iterable<PlannedCase>): Promise<CampaignSummary> {
  const summary = await runCases(cases);
  console.log(`${what}:\n${formatSummary(summary)}`);
  const failures = summary.failures.map((c) => `${describeCase(seed, c)}\n    ${c.outcome.detail.replace(/\n/g, '\n    ')}`);
  expect(failures, `${what}: ${failures.length} failures (seed ${seed})`).toEqual([]);
  return summary;
}

describe('a damaged database: the exact data or a typed error, never a silent loss', () => {
  it(`random damage to every kind of file (${randomCount} damages × paranoidChecks on/off)`, async () => {
    const summary = await campaign('random damage', randomCases(images, seed, 0, randomCount));
    // Every file kind was reached, and the outcomes are varied (the campaign is not vacuous).
    for (const role of ['current', 'manifest', 'table', 'wal']) expect(Object.keys(summary.byRole), role).toContain(role);
    expect(summary.byKind['read-error']).toBeGreaterThan(0);
    expect(summary.byKind['open-error']).toBeGreaterThan(0);
    expect(summary.byKind.exact).toBeGreaterThan(0);
  }, randomTimeout);

  it('every file removed: a typed error at open, never an emptier database', async () => {
    await campaign('every file removed', removalCases(images));
  });

  it('the MANIFEST cut at every second record and the last, the WAL at every fifth and the last', async () => {
    await campaign('MANIFEST and WAL cuts', [...cutCases(images, 'manifest', 2), ...cutCases(images, 'wal', 5)]);
  });
});
