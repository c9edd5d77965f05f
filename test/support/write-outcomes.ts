/**
 * WriteOutcomes: which database contents are legal after a run of writes, some acknowledged and
 * some failed, on the live file system and after a crash. Used by the fault tests
 * (test/db/faults.test.ts, test/db/faults-nth-call.test.ts).
 *
 * The writes are recorded in commit order (the order they were issued: the database commits in
 * issue order). The rules, the README's promise:
 * - live (a reopen on the same file system, or reads of the open database): every acknowledged
 *   write applied; each failed write applied whole or not at all (it may have reached the WAL);
 * - after a crash: the same for the writes up to some point p in commit order, where p is at least
 *   the durable point (the last acknowledged synced write, or the last acknowledged flush,
 *   compaction or reopen); nothing after p. Never half a batch either way.
 */
import type { DB } from '../../src/db.js';
import { applyWrite, sortedEntries, type State, type Write } from '../model/db-model.js';

/** A state as a comparable string (keys and values in hex, in key order). */
export function fingerprint(state: State): string {
  return JSON.stringify(sortedEntries(state).map(([k, v]) => [Buffer.from(k).toString('hex'), Buffer.from(v).toString('hex')]));
}

/** The database's whole content in `fingerprint`'s form. */
export async function contents(db: DB): Promise<string> {
  const rows: [string, string][] = [];
  for await (const [k, v] of db.iterator()) rows.push([k.toString('hex'), v.toString('hex')]);
  return JSON.stringify(rows);
}

/** Issues `w` through the async API. */
export function issue(db: DB, w: Write, sync: boolean): Promise<void> {
  if (w.t === 'put') return db.put(w.key, w.value, { sync });
  if (w.t === 'del') return db.del(w.key, { sync });
  return db.batch(
    w.ops.map((op) => (op.t === 'put' ? { type: 'put', key: op.key, value: op.value } : { type: 'del', key: op.key })),
    { sync },
  );
}

/** Caps the states enumerated: 2^failed writes of them, which a run keeps small. */
const MAX_STATES = 4096;

export class WriteOutcomes {
  #base: State;
  readonly #events: { w: Write; acked: boolean }[] = [];
  #durable = 0;

  /** Starts from `base`, durable (a fresh database, or what a reopen recovered). */
  constructor(base: State = new Map()) {
    this.#base = new Map(base);
  }

  /** Writes recorded since the base. */
  get count(): number {
    return this.#events.length;
  }

  /** How many of them survive any crash. */
  get durable(): number {
    return this.#durable;
  }

  acked(w: Write, sync: boolean): void {
    this.#events.push({ w, acked: true });
    if (sync) this.#durable = this.#events.length;
  }

  /** A write that was rejected but may have been written (whole or not at all). */
  failed(w: Write): void {
    this.#events.push({ w, acked: false });
  }

  /** Everything acknowledged so far is durable (a flush, a compaction or a close-and-reopen succeeded). */
  allDurable(): void {
    let last = this.#events.length;
    while (last > this.#durable && !this.#events[last - 1]!.acked) last--;
    this.#durable = last;
  }

  /** A reopen recovered `state` (which the caller checked is legal): it is the new durable base. */
  reset(state: State): void {
    this.#base = new Map(state);
    this.#events.length = 0;
    this.#durable = 0;
  }

  /** Fingerprints of the legal live states. */
  liveStates(): Set<string> {
    const out = new Set<string>();
    for (const s of this.#walk()) out.add(fingerprint(s));
    return out;
  }

  /** Fingerprints of the legal states after a crash. */
  crashStates(): Set<string> {
    const out = new Set<string>();
    this.#walk((p, states) => {
      if (p >= this.#durable) for (const s of states) out.add(fingerprint(s));
    });
    return out;
  }

  /**
   * Applies the events in order, showing `visit` the states after each prefix (borrowed: they
   * change as the walk goes on); returns the states after all of them.
   */
  #walk(visit?: (p: number, states: readonly State[]) => void): State[] {
    let states: State[] = [new Map(this.#base)];
    visit?.(0, states);
    this.#events.forEach(({ w, acked }, i) => {
      if (acked) {
        for (const s of states) applyWrite(s, w);
      } else {
        const next = new Map<string, State>();
        for (const s of states) {
          const applied = new Map(s);
          applyWrite(applied, w);
          next.set(fingerprint(s), s);
          next.set(fingerprint(applied), applied);
        }
        states = [...next.values()];
        if (states.length > MAX_STATES) throw new Error(`WriteOutcomes: more than ${MAX_STATES} legal states (too many failed writes)`);
      }
      visit?.(i + 1, states);
    });
    return states;
  }
}

/** The database's whole content as a model state. */
export async function readState(db: DB): Promise<State> {
  const state: State = new Map();
  for await (const [k, v] of db.iterator()) state.set(k.toString('hex'), [new Uint8Array(k), new Uint8Array(v)]);
  return state;
}
