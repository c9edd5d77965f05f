/**
 * SieveSnapshot: abstract-level's explicit snapshot (`db.snapshot()`, the `snapshot` read option)
 * over a sievekv Snapshot. abstract-level counts the reads using it and closes it when the
 * database closes; closing releases the sievekv snapshot (compaction may then drop what only it
 * could see).
 */
import { AbstractSnapshot } from 'abstract-level';
import { invalidArgument } from '../errors.js';
import type { Snapshot } from '../db/snapshot.js';

/** abstract-level's declared types omit the constructor's options ({ owner }). */
const SnapshotBase = AbstractSnapshot as unknown as new (options: object) => AbstractSnapshot;

export class SieveSnapshot extends SnapshotBase {
  /** The sievekv snapshot: reads through this one read at its sequence. */
  readonly snapshot: Snapshot;

  /** @internal Made by `SieveLevel#_snapshot`; `options.owner` is the database that closes it. */
  constructor(options: object, snapshot: Snapshot) {
    super(options);
    this.snapshot = snapshot;
  }

  async _close(): Promise<void> {
    this.snapshot.release();
  }
}

/**
 * The sievekv snapshot behind abstract-level's `snapshot` option (undefined for none);
 * INVALID_ARGUMENT for anything that is not a SieveLevel's snapshot.
 */
export function engineSnapshot(option: unknown): Snapshot | undefined {
  if (option === undefined || option === null) return undefined;
  if (!(option instanceof SieveSnapshot)) throw invalidArgument('option snapshot must come from db.snapshot() of a SieveLevel');
  return option.snapshot;
}
