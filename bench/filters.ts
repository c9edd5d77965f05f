/**
 * `npm run bench:filters`: build and probe throughput of sievekv's table-filter policies
 * (bench/filter-policies.ts), its standalone `BloomFilter`, and the npm packages `bloomfilter`
 * (Jason Davies) and `bloom-filters` (Callidon), in one run, each configured for about 1% false
 * positives, over filters of 10,000 and 1,000,000 keys. Each implementation runs in a child
 * process of its own (`--subject i`), one after another; the parent prints the report.
 *
 * Output: a header stating the setup (STYLE.md §16), then one line per workload, filter size and
 * implementation: keys/s (keys built or probed per second; median of the timed runs), the ratio to
 * sievekv's Bloom policy on the same workload, and for probes the share of probes that matched
 * (100% for present keys; the false-positive rate for absent ones). Takes under a minute, half
 * of it in `bloom-filters`, whose hashing is slow. Results and the command: BENCHMARKS.md.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import bloomFilters from 'bloom-filters';
import { BloomFilter as JdBloomFilter } from 'bloomfilter';
import { BloomFilter } from '../src/filter/bloom-filter.js';
import { FILTER_POLICIES, type PolicyUnderTest } from './filter-policies.js';
import { randomKeys } from './seeded-keys.js';

const SIZES = [10_000, 1_000_000] as const;
const KEY_BYTES = 16;
/** Distinct keys cycled through by probe loops (present: the first ones of the filter's keys). */
const QUERY_KEYS = 200_000;
const TARGET_FPP = 0.01;
const TIMED_RUNS = 5;
/** Aim of one timed run, and the cap on a workload's timed runs together (slow builds stop early). */
const RUN_TARGET_MS = 150;
const WORKLOAD_BUDGET_MS = 5_000;
const PRESENT_SEED = 0xf117e5;
const ABSENT_SEED = 0xab5e47;

type KeyKind = 'present' | 'absent';

/** One implementation, set up over the key sets (untimed), ready to build and probe. */
interface SubjectRun {
  /** Builds a fresh structure over the first `n` present keys and keeps it for the probes. */
  build(n: number): void;
  /** Size and shape of the structure last built, e.g. "10.00 bits/key, k = 6". */
  shape(n: number): string;
  /** Probe workloads by name: each runs `count` queries over `kind` keys and returns the matches. */
  readonly probes: ReadonlyMap<string, (kind: KeyKind, n: number, count: number) => number>;
}

interface Subject {
  readonly name: string;
  readonly config: string;
  setup(present: readonly Uint8Array[], absent: readonly Uint8Array[]): SubjectRun;
}

// Each implementation has its own probe loop (no shared helper taking a callback): a shared
// loop would collect type feedback from every implementation and run megamorphic for the later
// ones, which would time V8's inline caches rather than the filters.

function querySet<K>(present: readonly K[], absent: readonly K[], kind: KeyKind, n: number): [readonly K[], number] {
  return kind === 'present' ? [present, Math.min(n, QUERY_KEYS)] : [absent, Math.min(absent.length, QUERY_KEYS)];
}

function policySubject(p: PolicyUnderTest): Subject {
  const policy = p.make(p.benchBitsPerKey);
  return {
    name: `${p.label} policy`,
    config: `sievekv ${policy.constructor.name}(${p.benchBitsPerKey}), filter built by createFilter(keys)`,
    setup(present, absent) {
      let filter: Uint8Array = new Uint8Array(0);
      const probe = policy.newProbe();
      // createFilter takes an array of exactly the keys: made once per size, outside the timing.
      const keySets = new Map<number, readonly Uint8Array[]>();
      return {
        build(n) {
          let keys = keySets.get(n);
          if (keys === undefined) keySets.set(n, (keys = n === present.length ? present : present.slice(0, n)));
          filter = policy.createFilter(keys);
        },
        shape: (n) => `${((filter.length * 8) / n).toFixed(2)} bits/key`,
        probes: new Map([
          [
            'probe (setKey + mayMatch)',
            (kind, n, count) => {
              const [q, limit] = querySet(present, absent, kind, n);
              const f = filter;
              let hits = 0;
              let j = 0;
              for (let i = 0; i < count; i++) {
                probe.setKey(q[j]!);
                if (probe.mayMatch(f)) hits++;
                if (++j === limit) j = 0;
              }
              return hits;
            },
          ],
          [
            'keyMayMatch',
            (kind, n, count) => {
              const [q, limit] = querySet(present, absent, kind, n);
              const f = filter;
              let hits = 0;
              let j = 0;
              for (let i = 0; i < count; i++) {
                if (policy.keyMayMatch(q[j]!, f)) hits++;
                if (++j === limit) j = 0;
              }
              return hits;
            },
          ],
        ]),
      };
    },
  };
}

const standaloneSubject: Subject = {
  name: 'BloomFilter',
  config: `sievekv BloomFilter.create({ expectedInsertions: n, fpp: ${TARGET_FPP} }), add(key) each; MurmurHash3 x64_128`,
  setup(present, absent) {
    let filter = BloomFilter.create({ expectedInsertions: 1, fpp: TARGET_FPP });
    return {
      build(n) {
        filter = BloomFilter.create({ expectedInsertions: n, fpp: TARGET_FPP });
        for (let i = 0; i < n; i++) filter.add(present[i]!);
      },
      shape: (n) => `${(filter.bitSize / n).toFixed(2)} bits/key, k = ${filter.hashCount}`,
      probes: new Map([
        [
          'probe (mightContain)',
          (kind, n, count) => {
            const [q, limit] = querySet(present, absent, kind, n);
            const f = filter;
            let hits = 0;
            let j = 0;
            for (let i = 0; i < count; i++) {
              if (f.mightContain(q[j]!)) hits++;
              if (++j === limit) j = 0;
            }
            return hits;
          },
        ],
      ]),
    };
  },
};

const jasonDaviesSubject: Subject = {
  name: 'bloomfilter',
  config:
    `bloomfilter@${packageVersion('bloomfilter')} BloomFilter.withTargetError(n, ${TARGET_FPP}), add(key) each; ` +
    'FNV-1a; keys as 16-char latin1 strings of the same bytes (converted before timing)',
  setup(presentBytes, absentBytes) {
    const toString = (k: Uint8Array): string => Buffer.from(k.buffer, k.byteOffset, k.length).toString('latin1');
    const present = presentBytes.map(toString);
    const absent = absentBytes.map(toString);
    let filter = JdBloomFilter.withTargetError(1, TARGET_FPP);
    return {
      build(n) {
        filter = JdBloomFilter.withTargetError(n, TARGET_FPP);
        for (let i = 0; i < n; i++) filter.add(present[i]!);
      },
      shape: (n) => `${(filter.m / n).toFixed(2)} bits/key, k = ${filter.k}`,
      probes: new Map([
        [
          'probe (test)',
          (kind, n, count) => {
            const [q, limit] = querySet(present, absent, kind, n);
            const f = filter;
            let hits = 0;
            let j = 0;
            for (let i = 0; i < count; i++) {
              if (f.test(q[j]!)) hits++;
              if (++j === limit) j = 0;
            }
            return hits;
          },
        ],
      ]),
    };
  },
};

const callidonSubject: Subject = {
  name: 'bloom-filters',
  config:
    `bloom-filters@${packageVersion('bloom-filters')} BloomFilter.create(n, ${TARGET_FPP}), add(key) each; ` +
    'xxHash64 (xxhashjs); keys as Buffers over the same bytes (no copy)',
  setup(presentBytes, absentBytes) {
    const toBuffer = (k: Uint8Array): Buffer => Buffer.from(k.buffer, k.byteOffset, k.length);
    const present = presentBytes.map(toBuffer);
    const absent = absentBytes.map(toBuffer);
    let filter = bloomFilters.BloomFilter.create(1, TARGET_FPP);
    return {
      build(n) {
        filter = bloomFilters.BloomFilter.create(n, TARGET_FPP);
        for (let i = 0; i < n; i++) filter.add(present[i]!);
      },
      shape: (n) => `${(filter.size / n).toFixed(2)} bits/key, k = ${filter._nbHashes}`,
      probes: new Map([
        [
          'probe (has)',
          (kind, n, count) => {
            const [q, limit] = querySet(present, absent, kind, n);
            const f = filter;
            let hits = 0;
            let j = 0;
            for (let i = 0; i < count; i++) {
              if (f.has(q[j]!)) hits++;
              if (++j === limit) j = 0;
            }
            return hits;
          },
        ],
      ]),
    };
  },
};

const SUBJECTS: readonly Subject[] = [
  ...FILTER_POLICIES.map(policySubject),
  standaloneSubject,
  jasonDaviesSubject,
  callidonSubject,
];

// ---------------------------------------------------------------------------------------------
// Timing

function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

interface Timing {
  /** Operations per second, median over the timed runs. */
  readonly opsPerSec: number;
  readonly runs: number;
  /** (slowest − fastest) ÷ median of the timed runs: how noisy the figure is. */
  readonly spread: number;
}

/**
 * Times `run(reps)`, which performs `reps` × `opsPerRep` operations: a calibration run of one
 * rep (also the warm-up), then a warm-up at the calibrated size if that was short, then up to
 * TIMED_RUNS timed runs of about RUN_TARGET_MS each, fewer once WORKLOAD_BUDGET_MS is spent.
 */
function time(opsPerRep: number, run: (reps: number) => void, calibrationReps = 1): Timing {
  let t = nowMs();
  run(calibrationReps);
  const perRep = Math.max(1e-6, (nowMs() - t) / calibrationReps);
  const reps = Math.max(1, Math.round(RUN_TARGET_MS / perRep));
  if (perRep * calibrationReps < RUN_TARGET_MS) run(reps);
  const rates: number[] = [];
  let spent = 0;
  while (rates.length < TIMED_RUNS && (rates.length === 0 || spent < WORKLOAD_BUDGET_MS)) {
    t = nowMs();
    run(reps);
    const ms = nowMs() - t;
    spent += ms;
    rates.push((reps * opsPerRep) / (ms / 1000));
  }
  const mid = median(rates);
  return { opsPerSec: mid, runs: rates.length, spread: (Math.max(...rates) - Math.min(...rates)) / mid };
}

// ---------------------------------------------------------------------------------------------
// Setup and report

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('bench/filters: package.json not found above the script');
    dir = up;
  }
  return dir;
}

function packageVersion(name: string): string {
  const path = join(repoRoot(), 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}

function commit(): string {
  try {
    const root = repoRoot();
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    // Only the code this benchmark runs: other work in progress elsewhere does not change it.
    const paths = ['src/filter', 'bench/filters.ts', 'bench/filter-policies.ts', 'bench/seeded-keys.ts'];
    const dirty = execFileSync('git', ['status', '--porcelain', '--', ...paths], { cwd: root, encoding: 'utf8' });
    return dirty.trim() === '' ? head : `${head} (with uncommitted changes in src/filter or the bench)`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

function formatRate(opsPerSec: number): string {
  if (opsPerSec >= 1e6) return `${(opsPerSec / 1e6).toPrecision(3)} M`;
  return `${(opsPerSec / 1e3).toPrecision(3)} k`;
}

function formatShare(hits: number, count: number): string {
  const p = (hits / count) * 100;
  return p >= 99.995 ? '100%' : `${p.toFixed(p >= 10 ? 1 : p >= 1 ? 2 : 3)}%`;
}

interface Line {
  readonly workload: string;
  readonly n: number;
  readonly subject: string;
  readonly opsPerSec: number;
  readonly runs: number;
  readonly spread: number;
  readonly matched: string;
  /** Workload key shared by all subjects, for the ratio to the baseline. */
  readonly family: string;
}

/**
 * Runs every workload of one implementation in this process and returns its lines. Called in a
 * child process per implementation (see `main`), so that no implementation runs in code whose
 * type feedback and heap another one shaped.
 */
function runSubject(subject: Subject): { lines: Line[]; shape: string } {
  const present = randomKeys(Math.max(...SIZES), KEY_BYTES, PRESENT_SEED);
  const absent = randomKeys(QUERY_KEYS, KEY_BYTES, ABSENT_SEED);
  const run = subject.setup(present, absent);
  const lines: Line[] = [];
  let shape = '';
  for (const n of SIZES) {
    const build = time(n, (reps) => {
      for (let r = 0; r < reps; r++) run.build(n);
    });
    lines.push({ workload: 'build', family: 'build', n, subject: subject.name, ...build, matched: '' });
    shape = run.shape(n);
    let probeIndex = 0;
    for (const [name, probe] of run.probes) {
      // The first probe workload of every subject is comparable across subjects ("probe");
      // further ones (keyMayMatch) only among the policies.
      const family = probeIndex++ === 0 ? 'probe' : name;
      for (const kind of ['present', 'absent'] as const) {
        let hits = 0;
        let probed = 0;
        const t = time(
          1,
          (count) => {
            hits = probe(kind, n, count);
            probed = count;
          },
          20_000,
        );
        lines.push({
          workload: `${name}, ${kind}`,
          family: `${family}, ${kind}`,
          n,
          subject: subject.name,
          ...t,
          matched: formatShare(hits, probed),
        });
      }
    }
  }
  return { lines, shape };
}

const SUBJECT_FLAG = '--subject';

function main(): void {
  const flag = process.argv.indexOf(SUBJECT_FLAG);
  if (flag >= 0) {
    const subject = SUBJECTS[Number(process.argv[flag + 1])];
    if (subject === undefined) throw new Error(`${SUBJECT_FLAG}: no implementation ${process.argv[flag + 1]}`);
    process.stdout.write(JSON.stringify(runSubject(subject)));
    return;
  }

  const cpus = os.cpus();
  const started = nowMs();
  const header = [
    'sievekv bench/filters: filter build and probe throughput',
    `Date:     ${new Date().toISOString()}`,
    `Node:     ${process.version} (V8 ${process.versions.v8}), ${os.platform()} ${os.arch()}`,
    `CPU:      ${cpus.length} × ${cpus[0]?.model ?? 'unknown'}; load average at start ${os.loadavg()[0]!.toFixed(2)}`,
    `Commit:   ${commit()}`,
    `Keys:     ${KEY_BYTES}-byte random keys (seeded); filters over ${SIZES.map((n) => n.toLocaleString('en-US')).join(' and ')} keys;`,
    `          probes cycle over ${QUERY_KEYS.toLocaleString('en-US')} present keys (all of them at 10,000) or ${QUERY_KEYS.toLocaleString('en-US')} absent random keys`,
    `Method:   each implementation in its own node process, one after another; per workload a calibration/warm-up run,`,
    `          then ${TIMED_RUNS} timed runs of ≈ ${RUN_TARGET_MS} ms (fewer past ${WORKLOAD_BUDGET_MS / 1000} s), median; keys/s = keys inserted (build)`,
    "          or probed per second; ratio = keys/s ÷ the Bloom policy's on the same workload; spread = (max − min) ÷ median",
    'Configs (each near 1% false positives; size and k at 1,000,000 keys):',
  ];
  console.log(header.join('\n'));

  const lines: Line[] = [];
  const self = fileURLToPath(import.meta.url);
  SUBJECTS.forEach((subject, i) => {
    const out = execFileSync(process.execPath, [self, SUBJECT_FLAG, String(i)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 16 * 1024 * 1024,
    });
    const result = JSON.parse(out) as { lines: Line[]; shape: string };
    lines.push(...result.lines);
    console.log(`  ${subject.name.padEnd(15)} ${subject.config}; ${result.shape}`);
  });
  console.log('');

  // Display order: by filter size, then workload family (first appearance), then subject.
  const families: string[] = [];
  for (const l of lines) if (!families.includes(l.family)) families.push(l.family);
  const subjectIndex = (name: string): number => SUBJECTS.findIndex((s) => s.name === name);
  const sorted = [...lines].sort(
    (a, b) =>
      a.n - b.n ||
      families.indexOf(a.family) - families.indexOf(b.family) ||
      subjectIndex(a.subject) - subjectIndex(b.subject),
  );
  const baseline = SUBJECTS[0]!.name;
  const cols = ['workload', 'keys', 'implementation', 'keys/s', `vs ${baseline}`, 'matched', 'runs', 'spread'];
  const rows = sorted.map((l) => {
    const base = lines.find((b) => b.family === l.family && b.n === l.n && b.subject === baseline);
    const ratio = base === undefined ? '' : `${(l.opsPerSec / base.opsPerSec).toFixed(2)}×`;
    const spread = l.runs > 1 ? `${Math.round(l.spread * 100)}%` : '';
    return [l.workload, l.n.toLocaleString('en-US'), l.subject, formatRate(l.opsPerSec), ratio, l.matched, String(l.runs), spread];
  });
  const widths = cols.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]!.length)));
  const leftAligned = new Set([0, 2]);
  const fmt = (r: readonly string[]): string =>
    r.map((cell, i) => (leftAligned.has(i) ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd();
  console.log(fmt(cols));
  let last = '';
  sorted.forEach((l, i) => {
    const group = `${l.n} ${l.family}`;
    if (last !== '' && group !== last) console.log('');
    last = group;
    console.log(fmt(rows[i]!));
  });
  console.log('');
  console.log(`Total ${((nowMs() - started) / 1000).toFixed(0)} s; load average at end ${os.loadavg()[0]!.toFixed(2)}`);
}

main();
