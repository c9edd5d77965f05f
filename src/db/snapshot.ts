/**
 * Snapshots: a sequence number readers can hold so that they keep seeing the database as it was,
 * and that compaction must respect (it keeps every version a live snapshot can see).
 */
import { SieveError, ErrorCode, invalidArgument } from '../errors.js';

export class Snapshot {
  #released = false;

  /** @internal Made by the database; users get one from `db.snapshot()`. */
  constructor(
    /** Every write with a sequence ≤ this is visible through the snapshot; none after. */
    readonly sequence: number,
    private readonly list: SnapshotList,
  ) {}

  get released(): boolean {
    return this.#released;
  }

  /** Lets compaction drop the versions only this snapshot needed. Idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.list.remove(this);
  }

  [Symbol.dispose](): void {
    this.release();
  }

  /**
   * @internal Throws INVALID_ARGUMENT if the snapshot is another database's (its sequence means
   * nothing here), CLOSED if it was released (using it would read a moving target).
   */
  check(owner: SnapshotList): void {
    if (this.list !== owner) throw invalidArgument('the snapshot belongs to another database');
    if (this.#released) throw new SieveError(ErrorCode.CLOSED, 'snapshot was released');
  }
}

/** The live snapshots, oldest first (sequences only grow, so insertion order is sequence order). */
export class SnapshotList {
  readonly #live = new Set<Snapshot>();

  create(sequence: number): Snapshot {
    const s = new Snapshot(sequence, this);
    this.#live.add(s);
    return s;
  }

  remove(s: Snapshot): void {
    this.#live.delete(s);
  }

  get size(): number {
    return this.#live.size;
  }

  /** The oldest live snapshot's sequence, or undefined. */
  oldest(): number | undefined {
    for (const s of this.#live) return s.sequence;
    return undefined;
  }

  /** Every live snapshot's sequence, ascending. */
  sequences(): number[] {
    return [...this.#live].map((s) => s.sequence);
  }
}
