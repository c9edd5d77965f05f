/**
 * A database-level corruption campaign (issue 9): damage one file of a closed database — CURRENT,
 * the MANIFEST, a table, the WAL, REGIONS — open it with `paranoidChecks` on and off, read
 * everything (every key ever written and some never written with `get`, a full scan forwards and
 * backwards), and judge the outcome. Used by test/db/corruption-db.test.ts (a fixed seed, a
 * bounded number of cases) and scripts/corruption-campaign.ts (long runs).
 *
 * Allowed outcomes:
 * - `exact`: every read shows the expected contents;
 * - `open-error` / `read-error`: a typed SieveError at open, or at a read (table damage often
 *   shows only when a read reaches the damaged block); every read that did return, returned the
 *   expected data; and — "nothing is destroyed" — once the damaged file is put back as it was,
 *   the database opens with the exact contents;
 * - `wal-tail-lost`: the newest WAL lost a suffix of its batches, what a crash leaves. Silent
 *   only for a truncation (which leaves no trace a reader could see); for any other damage the
 *   loss must be counted in `sievekv.stats` (walTornBytes or walRecordsSkipped);
 * - `wal-skipped` (paranoidChecks off only): one contiguous run of the damaged WAL's batches was
 *   skipped, whole batches only, and counted in walRecordsSkipped.
 * Anything else is a failure: a non-SieveError (a crash), a missing key, a wrong value or an extra
 * key without an error, reads that disagree with each other, a batch half applied, or a database
 * that a successful open leaves different on the next open.
 *
 * Cases: random damage (`randomCases`: deterministic from the seed and the case's index, so one
 * case replays alone), every file removed (`removalCases`), and the MANIFEST or the WAL cut at
 * every record (`cutCases`). A run with no outcome after 30 s is a hang; one that loops on the
 * thread never returns, so callers name each case before it runs (`onStart`).
 */
import { SeededRandom } from '../../bench/seeded-keys.js';
import { DB } from '../../src/db.js';
import { isSieveError } from '../../src/errors.js';
import type { MemFileSystem } from '../../src/fs/mem-fs.js';
import { type Boundary, boundariesOf, type Damage, damaged, type DamagePlan, describeDamage, pickDamage } from './damage.js';
import { buildImage, type DatabaseImage, type FileRole, type ImageFile, materialize, sameState, type State, stateWith, VARIANTS, writeFile } from './image.js';

export type OutcomeKind = 'exact' | 'open-error' | 'read-error' | 'wal-tail-lost' | 'wal-skipped' | 'failure';

export interface CaseOutcome {
  kind: OutcomeKind;
  /** The error code (typed errors), or what failed (failures). */
  detail: string;
}

/** Every read of one open database: what it returned, or the error it threw. */
interface Observation {
  forward: [string, string][];
  forwardError: unknown;
  reverse: [string, string][];
  reverseError: unknown;
  gets: Map<string, string | undefined>;
  getErrors: Map<string, unknown>;
  stats: { walRecordsSkipped: number; walTornBytes: number } | undefined;
}

const hexOf = (b: Uint8Array): string => Buffer.from(b).toString('hex');

async function observe(db: DB, probes: readonly string[]): Promise<Observation> {
  const obs: Observation = {
    forward: [],
    forwardError: undefined,
    reverse: [],
    reverseError: undefined,
    gets: new Map(),
    getErrors: new Map(),
    stats: undefined,
  };
  try {
    const stats = JSON.parse(db.getProperty('sievekv.stats')!) as { walRecordsSkipped: number; walTornBytes: number };
    obs.stats = { walRecordsSkipped: stats.walRecordsSkipped, walTornBytes: stats.walTornBytes };
  } catch {
    // stats are only needed for a state that lost data; a failure to read them shows there.
  }
  try {
    for await (const [k, v] of db.iterator()) obs.forward.push([hexOf(k), hexOf(v)]);
  } catch (err) {
    obs.forwardError = err;
  }
  try {
    for await (const [k, v] of db.iterator({ reverse: true })) obs.reverse.push([hexOf(k), hexOf(v)]);
  } catch (err) {
    obs.reverseError = err;
  }
  for (const key of probes) {
    try {
      const v = await db.get(Buffer.from(key, 'hex'));
      obs.gets.set(key, v === undefined ? undefined : hexOf(v));
    } catch (err) {
      obs.getErrors.set(key, err);
    }
  }
  return obs;
}

/** The first non-SieveError among the observation's errors. */
function crashIn(obs: Observation): unknown {
  for (const err of [obs.forwardError, obs.reverseError, ...obs.getErrors.values()]) {
    if (err !== undefined && !isSieveError(err)) return err;
  }
  return undefined;
}

function firstError(obs: Observation): unknown {
  return obs.forwardError ?? obs.reverseError ?? obs.getErrors.values().next().value;
}

function sortedRows(state: State): [string, string][] {
  return [...state.entries()].sort((a, b) => Buffer.compare(Buffer.from(a[0], 'hex'), Buffer.from(b[0], 'hex')));
}

/**
 * Why `obs` is not a (possibly error-cut) view of `state`, or undefined if it is: every get that
 * returned matches, each scan is a prefix of the state's rows (all of them without an error).
 */
function mismatch(obs: Observation, state: State): string | undefined {
  const rows = sortedRows(state);
  const prefix = (got: [string, string][], want: [string, string][], err: unknown, what: string): string | undefined => {
    for (let i = 0; i < got.length; i++) {
      const w = want[i];
      if (w === undefined) return `${what}: extra row ${got[i]![0]} after the last expected`;
      if (got[i]![0] !== w[0]) return `${what}: row ${i} is key ${got[i]![0]}, expected ${w[0]}`;
      if (got[i]![1] !== w[1]) return `${what}: key ${w[0]} has a wrong value`;
    }
    if (err === undefined && got.length !== want.length) return `${what}: ended after ${got.length} of ${want.length} rows without an error (next: ${want[got.length]![0]})`;
    return undefined;
  };
  const f = prefix(obs.forward, rows, obs.forwardError, 'forward scan');
  if (f !== undefined) return f;
  const r = prefix(obs.reverse, [...rows].reverse(), obs.reverseError, 'reverse scan');
  if (r !== undefined) return r;
  for (const [k, v] of obs.gets) {
    if (state.get(k) !== v) return `get ${k}: ${v === undefined ? 'undefined' : 'a value'}, expected ${state.get(k) === undefined ? 'undefined' : 'a value'}${v !== undefined && state.get(k) !== undefined ? ' (wrong value)' : ''}`;
  }
  return undefined;
}

function errorCode(err: unknown): string {
  return isSieveError(err) ? err.code : String(err);
}

/** What `db` shows when every read succeeded: the forward scan as a state. */
function fullState(obs: Observation): State | undefined {
  if (obs.forwardError !== undefined || obs.reverseError !== undefined || obs.getErrors.size > 0) return undefined;
  return new Map(obs.forward);
}

export interface CaseOptions {
  paranoidChecks: boolean;
}

interface Candidate {
  kind: 'wal-tail-lost' | 'wal-skipped';
  state: State;
  what: string;
}

/** The bytes of the file `damage` touched: [start, end) (empty for an append, at the old end). */
export function damageRange(damage: Damage, size: number): [number, number] {
  switch (damage.kind) {
    case 'flip':
      return [damage.offset, damage.offset + 1];
    case 'zero':
      return [damage.offset, Math.min(size, damage.offset + damage.length)];
    case 'truncate':
      return [damage.length, size];
    case 'append':
      return [size, size];
    case 'remove':
      return [0, size];
  }
}

/**
 * The states other than the exact one that damage to `plan.file` may legitimately leave (see the
 * file header): the newest WAL without a suffix of its batches, starting no earlier than the
 * record the damage touched; or (paranoidChecks off) the WAL without one contiguous run of
 * batches, each of whose records the damage touched.
 */
function candidates(image: DatabaseImage, plan: DamagePlan, paranoid: boolean): Candidate[] {
  if (plan.file.role !== 'wal') return [];
  const wal = image.wals.indexOf(plan.file.path);
  const idx = image.walBatches.flatMap((b, i) => (b.wal === wal ? [i] : []));
  if (idx.length === 0) return [];
  const [start, end] = damageRange(plan.damage, plan.file.bytes.length);
  const touched = (i: number): boolean => {
    const b = image.walBatches[i]!;
    return b.offset < end && start < b.end;
  };
  const untouchedBefore = idx.filter((i) => image.walBatches[i]!.end <= start).length;
  const first = idx[0]!;
  const last = idx[idx.length - 1]! + 1;
  const newest = wal === image.wals.length - 1;
  const out: Candidate[] = [];
  if (newest) {
    for (let k = first + untouchedBefore; k < last; k++) {
      out.push({ kind: 'wal-tail-lost', state: stateWith(image, (i) => i < k), what: `batches ${k - first}.. of ${idx.length} lost` });
    }
  }
  if (!paranoid) {
    for (let i = first; i < last; i++) {
      if (!touched(i)) continue;
      for (let j = i + 1; j <= last && touched(j - 1); j++) {
        if (j === last && newest) continue; // a suffix: already a tail candidate
        out.push({ kind: 'wal-skipped', state: stateWith(image, (n) => n < i || n >= j), what: `batches ${i - first}..${j - first - 1} of ${idx.length} skipped` });
      }
    }
  }
  return out;
}

/**
 * Opens, reads everything, closes. Returns the observation, or the error the open threw. With
 * paranoidChecks off the database also keeps images of the table files it reads often
 * (`tableFileCacheSize`) and no block cache, so damage meets the reads of file images too, whose
 * blocks are checked once, when each joins the image.
 */
async function openAndObserve(image: DatabaseImage, fs: MemFileSystem, paranoid: boolean): Promise<{ obs?: Observation; openError?: unknown }> {
  let db: DB;
  try {
    // Without paranoid checks, no block cache either: the reads after the first of a block come from the file's image.
    const reads = paranoid ? { tableFileCacheSize: 0 } : { tableFileCacheSize: 1 << 24, blockCacheSize: 0 };
    db = await DB.open(image.dir, { ...image.options, fs, paranoidChecks: paranoid, ...reads });
  } catch (err) {
    return { openError: err };
  }
  let obs: Observation;
  try {
    obs = await observe(db, image.probes);
  } finally {
    try {
      await db.close();
    } catch (err) {
      // A close after a latched background error may report it; only a crash matters here.
      if (!isSieveError(err)) throw err;
    }
  }
  return { obs };
}

/**
 * After a typed error: put the damaged file back as it was (if it is still where it was, or was
 * removed by the damage) and open again: the contents must be exact. Nothing a failed open or a
 * failed read did may have destroyed data that the undamaged file still holds.
 */
async function healed(image: DatabaseImage, fs: MemFileSystem, plan: DamagePlan, paranoid: boolean): Promise<string | undefined> {
  const present = fs.exists(plan.file.path);
  if (!present && plan.damage.kind !== 'remove') return undefined; // moved away by recovery: nothing to put back
  writeFile(fs, plan.file.path, plan.file.bytes);
  const { obs, openError } = await openAndObserve(image, fs, paranoid);
  if (openError !== undefined) return `after putting the file back, the open fails: ${String(openError)}`;
  const crash = crashIn(obs!);
  if (crash !== undefined) return `after putting the file back, a read crashed: ${String(crash)}`;
  const err = firstError(obs!);
  if (err !== undefined) return `after putting the file back, a read fails: ${String(err)}`;
  const why = mismatch(obs!, image.expected);
  return why === undefined ? undefined : `after putting the file back: ${why}`;
}

/** Runs one case: `plan` applied to a fresh copy of `image`, opened with `paranoidChecks`. */
export async function runCase(image: DatabaseImage, plan: DamagePlan, options: CaseOptions): Promise<CaseOutcome> {
  const paranoid = options.paranoidChecks;
  const fs = materialize(image);
  const bytes = damaged(plan.file.bytes, plan.damage);
  if (bytes === null) fs.remove(plan.file.path);
  else writeFile(fs, plan.file.path, bytes);

  const { obs, openError } = await openAndObserve(image, fs, paranoid);
  if (openError !== undefined) {
    if (!isSieveError(openError)) return { kind: 'failure', detail: `open crashed: ${stackOf(openError)}` };
    const why = await healed(image, fs, plan, paranoid);
    if (why !== undefined) return { kind: 'failure', detail: `open failed with ${errorCode(openError)} (${openError.message}); ${why}` };
    return { kind: 'open-error', detail: openError.code };
  }
  const o = obs!;
  const crash = crashIn(o);
  if (crash !== undefined) return { kind: 'failure', detail: `a read crashed: ${stackOf(crash)}` };

  // A view of the exact contents (possibly cut short by typed errors)?
  const exactWhy = mismatch(o, image.expected);
  const err = firstError(o);
  if (exactWhy === undefined) {
    if (err !== undefined) {
      const why = await healed(image, fs, plan, paranoid);
      if (why !== undefined) return { kind: 'failure', detail: `a read failed with ${errorCode(err)}; ${why}` };
      return { kind: 'read-error', detail: errorCode(err) };
    }
    return stable(image, fs, paranoid, image.expected, { kind: 'exact', detail: '' });
  }
  // Otherwise only a WAL's batches may be missing, and only as the header says.
  const state = fullState(o);
  const allowed = candidates(image, plan, paranoid);
  const match = state === undefined ? allowed.find((c) => mismatch(o, c.state) === undefined) : allowed.find((c) => sameState(c.state, state));
  if (match === undefined) {
    return { kind: 'failure', detail: `silent loss or wrong data: ${exactWhy}${err !== undefined ? ` (other reads failed with ${errorCode(err)})` : ''}` };
  }
  const counted = (o.stats?.walTornBytes ?? 0) > 0 || (o.stats?.walRecordsSkipped ?? 0) > 0;
  if (match.kind === 'wal-skipped' && (o.stats?.walRecordsSkipped ?? 0) === 0) {
    return { kind: 'failure', detail: `${match.what} but walRecordsSkipped is 0: ${exactWhy}` };
  }
  if (!counted && plan.damage.kind !== 'truncate') {
    return { kind: 'failure', detail: `${match.what} with nothing counted in walTornBytes or walRecordsSkipped: ${exactWhy}` };
  }
  if (err !== undefined) return { kind: 'read-error', detail: `${errorCode(err)} after ${match.what}` };
  // A tail lost to a cut (no trace) or to damage in the last record(s) (counted in walTornBytes).
  const cause = match.kind === 'wal-skipped' ? 'skipped' : plan.damage.kind === 'truncate' ? 'cut' : 'damaged';
  return stable(image, fs, paranoid, state!, { kind: match.kind, detail: `${cause}: ${match.what}` });
}

/** A database that opened must show the same contents on the next open: nothing more is lost. */
async function stable(image: DatabaseImage, fs: MemFileSystem, paranoid: boolean, state: State, outcome: CaseOutcome): Promise<CaseOutcome> {
  const { obs, openError } = await openAndObserve(image, fs, paranoid);
  if (openError !== undefined) return { kind: 'failure', detail: `${outcome.kind}, but the next open fails: ${String(openError)}` };
  const crash = crashIn(obs!);
  if (crash !== undefined) return { kind: 'failure', detail: `${outcome.kind}, but a read after the next open crashed: ${stackOf(crash)}` };
  const err = firstError(obs!);
  if (err !== undefined) return { kind: 'failure', detail: `${outcome.kind}, but a read after the next open fails: ${String(err)}` };
  const why = mismatch(obs!, state);
  if (why !== undefined) return { kind: 'failure', detail: `${outcome.kind}, but the next open shows other contents: ${why}` };
  return outcome;
}

function stackOf(err: unknown): string {
  return err instanceof Error ? (err.stack ?? String(err)).split('\n').slice(0, 6).join('\n') : String(err);
}

// -------------------------------------------------------------------------------------------
// Driving many cases

/** Roles damaged at random, with weights: the WAL and tables, where recovery does most, most. */
const ROLE_WEIGHTS: readonly [FileRole, number][] = [
  ['current', 1],
  ['manifest', 3],
  ['table', 4],
  ['wal', 4],
  ['regions', 0.5],
  ['memtable-image', 1],
];

/** One damage to run (twice: paranoidChecks on and off), and how to name it for a replay. */
export interface PlannedCase {
  /** `case N` for a random case (replay: the seed and N), or the sweep's name for the rest. */
  label: string;
  image: DatabaseImage;
  plan: DamagePlan;
}

export interface CampaignCase extends PlannedCase {
  paranoidChecks: boolean;
  outcome: CaseOutcome;
  ms: number;
}

/** The boundaries of each file of the images, computed once. */
const boundaryCache = new WeakMap<ImageFile, Boundary[]>();
function boundaries(file: ImageFile): Boundary[] {
  let b = boundaryCache.get(file);
  if (b === undefined) {
    b = boundariesOf(file);
    boundaryCache.set(file, b);
  }
  return b;
}

/** Random case `index`: deterministic from the seed and the index alone. */
export function randomCase(images: readonly DatabaseImage[], seed: number, index: number): PlannedCase {
  const random = new SeededRandom((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const next = (): number => random.nextUint32() / 2 ** 32;
  const image = images[index % images.length]!;
  const roles = ROLE_WEIGHTS.filter(([role]) => image.files.some((f) => f.role === role));
  const total = roles.reduce((sum, [, w]) => sum + w, 0);
  let r = next() * total;
  let role = roles[0]![0];
  for (const [name, w] of roles) {
    if (r < w) {
      role = name;
      break;
    }
    r -= w;
  }
  const files = image.files.filter((f) => f.role === role);
  const file = files[Math.floor(next() * files.length)]!;
  return { label: `case ${index}`, image, plan: pickDamage(file, boundaries(file), random) };
}

export function* randomCases(images: readonly DatabaseImage[], seed: number, first: number, count: number): Generator<PlannedCase> {
  for (let index = first; index < first + count; index++) yield randomCase(images, seed, index);
}

/** Each file of each image removed. */
export function removalCases(images: readonly DatabaseImage[]): PlannedCase[] {
  return images.flatMap((image) => image.files.map((file) => ({ label: 'removal', image, plan: { file, damage: { kind: 'remove' as const }, where: 'whole file' } })));
}

/**
 * The logs of `role` cut at every fragment: at its start (a clean cut between records), one byte
 * into it, and one byte before its end; every `every`-th fragment.
 */
export function cutCases(images: readonly DatabaseImage[], role: 'manifest' | 'wal', every = 1): PlannedCase[] {
  const out: PlannedCase[] = [];
  for (const image of images) {
    for (const file of image.files.filter((f) => f.role === role)) {
      boundaries(file).forEach((b, i) => {
        if (i % every !== 0 && i !== boundaries(file).length - 1) return;
        for (const length of new Set([b.offset, b.offset + 1, b.offset + b.length - 1])) {
          out.push({ label: `${role} cuts`, image, plan: { file, damage: { kind: 'truncate', length }, where: b.name } });
        }
      });
    }
  }
  return out;
}

/** A run (two opens and full reads of a small database) takes well under a second. */
const HANG_MS = 30_000;

export interface RunOptions {
  /** Stops starting cases after this many milliseconds. */
  maxMs?: number;
  /** Told before each run (print it: a hang then names its case). */
  onStart?: (c: PlannedCase, paranoid: boolean) => void;
  onCase?: (c: CampaignCase) => void;
}

export interface CampaignSummary {
  /** Damages run (each twice). */
  cases: number;
  runs: number;
  byKind: Record<OutcomeKind, number>;
  /** By file role, then outcome kind (and a tail lost: `cut`, `damaged`). */
  byRole: Record<string, Record<string, number>>;
  failures: CampaignCase[];
  ms: number;
}

export async function buildImages(seed: number): Promise<DatabaseImage[]> {
  const images: DatabaseImage[] = [];
  for (const v of VARIANTS) images.push(await buildImage(v, seed));
  return images;
}

/** Runs each case with paranoidChecks on, then off. */
export async function runCases(cases: Iterable<PlannedCase>, options: RunOptions = {}): Promise<CampaignSummary> {
  const started = Date.now();
  const summary: CampaignSummary = {
    cases: 0,
    runs: 0,
    byKind: { exact: 0, 'open-error': 0, 'read-error': 0, 'wal-tail-lost': 0, 'wal-skipped': 0, failure: 0 },
    byRole: {},
    failures: [],
    ms: 0,
  };
  for (const planned of cases) {
    if (options.maxMs !== undefined && Date.now() - started > options.maxMs) break;
    summary.cases++;
    for (const paranoidChecks of [true, false]) {
      options.onStart?.(planned, paranoidChecks);
      const t = Date.now();
      let outcome: CaseOutcome;
      let timer: NodeJS.Timeout | undefined;
      try {
        // A run that waits for ever is a hang (one that loops on the thread never returns here:
        // onStart has named it).
        const hang = new Promise<CaseOutcome>((resolve) => {
          timer = setTimeout(() => resolve({ kind: 'failure', detail: `hang: no outcome after ${HANG_MS / 1000} s` }), HANG_MS);
        });
        outcome = await Promise.race([runCase(planned.image, planned.plan, { paranoidChecks }), hang]);
      } catch (err) {
        outcome = { kind: 'failure', detail: `the case itself threw: ${err instanceof Error ? err.stack : String(err)}` };
      } finally {
        clearTimeout(timer);
      }
      const c: CampaignCase = { ...planned, paranoidChecks, outcome, ms: Date.now() - t };
      summary.runs++;
      summary.byKind[outcome.kind]++;
      const role = (summary.byRole[planned.plan.file.role] ??= {});
      const kind = outcome.kind === 'wal-tail-lost' ? `${outcome.kind} (${outcome.detail.split(':')[0]})` : outcome.kind;
      role[kind] = (role[kind] ?? 0) + 1;
      if (outcome.kind === 'failure') summary.failures.push(c);
      options.onCase?.(c);
    }
  }
  summary.ms = Date.now() - started;
  return summary;
}

/** One line that names (and so replays) a case and says exactly what damage it did. */
export function describeCase(seed: number, c: PlannedCase & { paranoidChecks?: boolean }): string {
  const paranoid = c.paranoidChecks === undefined ? '' : `, paranoidChecks ${c.paranoidChecks}`;
  return `seed ${seed} ${c.label} (${c.image.name}${paranoid}): ${describeDamage(c.plan)}`;
}

/** The summary as a few lines of text. */
export function formatSummary(summary: CampaignSummary): string {
  const lines = [
    `${summary.cases} damages, ${summary.runs} runs in ${(summary.ms / 1000).toFixed(1)} s: ` +
      Object.entries(summary.byKind)
        .map(([k, n]) => `${k} ${n}`)
        .join(', '),
  ];
  for (const [role, kinds] of Object.entries(summary.byRole).sort()) {
    lines.push(`  ${role.padEnd(9)} ${Object.entries(kinds).map(([k, n]) => `${k} ${n}`).join(', ')}`);
  }
  return lines.join('\n');
}
