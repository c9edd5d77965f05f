/**
 * A region: one LSM tree's in-memory part and its directory. A plain database has one region
 * (index 0, the database directory itself); a sharded one has one per router region, each in a
 * sub-directory. All regions share the database's WAL, sequence numbers and MANIFEST, so a batch
 * that spans regions is one WAL record (atomic) and a snapshot is one sequence number.
 */
import { join } from 'node:path';
import { MemTable } from '../memtable/memtable.js';

export class Region {
  mem: MemTable;
  /** The memtable being flushed, if any: read after `mem`, before the tables. */
  imm: MemTable | null = null;

  constructor(
    readonly index: number,
    readonly dir: string,
    private readonly newMemTable: () => MemTable,
  ) {
    this.mem = newMemTable();
  }

  /** Starts a fresh memtable; the full one becomes `imm` until it is flushed. */
  switchMemTable(): void {
    this.imm = this.mem;
    this.mem = this.newMemTable();
  }
}

/** Region 0 lives in the database directory (so a one-region database is LevelDB's layout). */
export function regionDir(dbDir: string, index: number): string {
  return index === 0 ? dbDir : join(dbDir, `region-${index}`);
}
