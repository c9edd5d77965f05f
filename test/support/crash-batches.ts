/**
 * The batch scheme of the SIGKILL test (test/db/crash-kill.test.ts), shared by the writing child
 * (crash-writer.ts) and the checking parent. Batch ids only grow; each child run writes the ids
 * `runStart(run)`, `runStart(run) + 1`, … in that order (so the WAL holds them in id order), and
 * batch `id` is:
 *
 * - `b<id>-k<j>` = `v<id>…` for j < n: keys of its own (n = 1..8, padding random);
 * - `m<id>` = `n`: the marker, which says the batch is there and how many keys it has;
 * - `t<id>` = `t<id>`, and a delete of `t<id-2>` when that batch belongs to the same run: after
 *   recovery `t<id>` is present exactly for the last two batches of each run's surviving prefix;
 * - `s<x>` = `s<id>` for the shared keys `sharedKeysOf(id)`: overwrites of keys many batches
 *   write, whose value must be the newest surviving batch's.
 *
 * `checkRecovered` decides whether a database's content is a state this scheme can legally reach.
 */

/** Ids of run `run` (0-based) start here; runs are far apart so their ids never meet. */
export function runStart(run: number): number {
  return run * 1_000_000 + 1;
}

export function runOf(id: number): number {
  return Math.floor((id - 1) / 1_000_000);
}

export const SHARED_KEYS = 23;

/** The shared keys batch `id` overwrites (a fixed function of the id). */
export function sharedKeysOf(id: number): number[] {
  const a = (id * 7919) % SHARED_KEYS;
  const b = (id * 104729 + 3) % SHARED_KEYS;
  return a === b ? [a] : [a, b];
}

export type BatchOp = { type: 'put'; key: string; value: string } | { type: 'del'; key: string };

/** Batch `id` with `n` own keys, values padded with `pad` characters. */
export function batchOps(id: number, n: number, pad: number): BatchOp[] {
  const ops: BatchOp[] = [];
  for (let j = 0; j < n; j++) ops.push({ type: 'put', key: `b${id}-k${j}`, value: `v${id}`.padEnd(pad + 8, '.') });
  ops.push({ type: 'put', key: `m${id}`, value: String(n) });
  ops.push({ type: 'put', key: `t${id}`, value: `t${id}` });
  if (runOf(id - 2) === runOf(id) && id - 2 >= runStart(runOf(id))) ops.push({ type: 'del', key: `t${id - 2}` });
  for (const x of sharedKeysOf(id)) ops.push({ type: 'put', key: `s${x}`, value: `s${id}` });
  return ops;
}

/**
 * Problems with `entries` (the whole database) given the acknowledged ids of every run so far;
 * empty when the content is legal: every acknowledged batch there, no batch half there, each
 * run's surviving batches a prefix of what it wrote, deletes and overwrites applied in order.
 */
export function checkRecovered(entries: Map<string, string>, acked: readonly (readonly number[])[]): string[] {
  const problems: string[] = [];
  const present = new Map<number, number>(); // id → n
  for (const [key, value] of entries) {
    const m = /^m(\d+)$/.exec(key);
    if (m) present.set(Number(m[1]), Number(value));
  }
  for (const [key, value] of entries) {
    const b = /^b(\d+)-k(\d+)$/.exec(key);
    if (b) {
      const id = Number(b[1]);
      const n = present.get(id);
      if (n === undefined) problems.push(`${key} is there but its batch's marker m${id} is not (half a batch)`);
      else if (Number(b[2]) >= n) problems.push(`${key} is beyond its batch's ${n} keys`);
      if (!value.startsWith(`v${id}.`) && value !== `v${id}`) problems.push(`${key} has the wrong value ${value.slice(0, 20)}`);
    }
  }
  for (const [id, n] of present) {
    for (let j = 0; j < n; j++) if (!entries.has(`b${id}-k${j}`)) problems.push(`batch ${id} is there (marker) but b${id}-k${j} is missing (half a batch)`);
  }
  // Per run: the surviving ids are a prefix start..last, covering every acknowledged id.
  const idsOfRun = new Map<number, number[]>();
  for (const id of present.keys()) {
    const ids = idsOfRun.get(runOf(id));
    if (ids === undefined) idsOfRun.set(runOf(id), [id]);
    else ids.push(id);
  }
  for (let run = 0; run < acked.length; run++) {
    const ids = (idsOfRun.get(run) ?? []).sort((x, y) => x - y);
    const start = runStart(run);
    const last = ids.length === 0 ? start - 1 : ids[ids.length - 1]!;
    if (ids.length !== last - start + 1) problems.push(`run ${run}: surviving batches are not a prefix (${ids.length} of ${start}..${last})`);
    for (const id of acked[run]!) if (!present.has(id)) problems.push(`run ${run}: acknowledged batch ${id} is missing`);
    for (let id = start; id <= last; id++) {
      const want = id + 2 > last; // deleted by batch id + 2 if that survived
      if (entries.has(`t${id}`) !== want) problems.push(`t${id} should be ${want ? 'present' : 'deleted'} (run ${run} survived to ${last})`);
    }
  }
  for (const key of entries.keys()) {
    const t = /^t(\d+)$/.exec(key);
    if (t && !present.has(Number(t[1]))) problems.push(`${key} is there without its batch`);
    if (!/^(m\d+|b\d+-k\d+|t\d+|s\d+)$/.test(key)) problems.push(`unexpected key ${key}`);
  }
  // Shared keys: the newest surviving writer's value.
  const newest = new Map<number, number>();
  for (const id of present.keys()) {
    for (const x of sharedKeysOf(id)) if ((newest.get(x) ?? -1) < id) newest.set(x, id);
  }
  for (let x = 0; x < SHARED_KEYS; x++) {
    const want = newest.get(x);
    const have = entries.get(`s${x}`);
    if (have !== (want === undefined ? undefined : `s${want}`)) problems.push(`s${x} is ${have}, expected ${want === undefined ? 'absent' : `s${want}`}`);
  }
  return problems;
}

/** What `checkRecovered`'s problems amount to, counted by kind (for summaries). */
export interface RecoveryAudit {
  /** Acknowledged batches missing. */
  lost: number;
  /** Batches present in part (a key without its marker, or a marker without a key). */
  halfApplied: number;
  /** Every other problem: gaps in a run's prefix, deletes or overwrites applied out of order. */
  other: number;
  problems: string[];
}

export function auditRecovered(entries: Map<string, string>, acked: readonly (readonly number[])[]): RecoveryAudit {
  const problems = checkRecovered(entries, acked);
  const lost = problems.filter((p) => /acknowledged batch \d+ is missing/.test(p)).length;
  const halfApplied = new Set(problems.filter((p) => /half a batch/.test(p)).map((p) => /(?:b|m|batch )(\d+)/.exec(p)?.[1])).size;
  const other = problems.filter((p) => !/acknowledged batch \d+ is missing|half a batch/.test(p)).length;
  return { lost, halfApplied, other, problems };
}
