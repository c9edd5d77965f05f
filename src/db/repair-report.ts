/**
 * What `repairDB` (repair.ts) returns and prints: what it kept, what it dropped and why. The
 * counters are gathered while it runs (`RepairCounts`).
 */

/** Something repair found damaged or could not read (and dropped, or moved to `lost/`). */
export interface RepairProblem {
  readonly file: string;
  readonly offset?: number;
  readonly reason: string;
}

/** What a repair kept and dropped. */
export interface RepairReport {
  readonly dir: string;
  /** The new MANIFEST, which CURRENT names. */
  readonly manifest: string;
  readonly lastSequence: number;
  readonly nextFileNumber: number;
  readonly regions: number;
  readonly tables: {
    /** Table files found. */
    readonly found: number;
    /** Found tables with a fault (each moved to `lost/`, its readable entries copied). */
    readonly damaged: number;
    /** Tables (found, or made from WALs and damaged tables) merged because their key ranges overlapped. */
    readonly merged: number;
    /** Tables the new MANIFEST names, and their bytes. */
    readonly kept: number;
    readonly bytesKept: number;
    /** Found tables a readable MANIFEST record had retired (left behind by a failed removal): set aside unread. */
    readonly obsolete: number;
    /** Found tables of which nothing could be read (footer or index damaged, or the file unreadable). */
    readonly unreadable: number;
    /** Unreadable data blocks, and their bytes (a table whose footer or index is damaged counts whole). */
    readonly blocksDropped: number;
    readonly bytesDropped: number;
  };
  readonly entries: {
    /** Readable entries found: in the tables and in the WALs. */
    readonly read: number;
    /** Entries in the tables the new MANIFEST names. */
    readonly kept: number;
    /** Entries no reader could see, dropped by merging: older versions of a key, and copies. */
    readonly superseded: number;
  };
  readonly wal: {
    readonly files: number;
    /** Records replayed, and the entries they held. */
    readonly records: number;
    readonly entries: number;
    /** WALs a readable MANIFEST record said were already in tables: set aside unread. */
    readonly obsolete: number;
    /** Damaged stretches and malformed records skipped, and their bytes. */
    readonly recordsDropped: number;
    readonly bytesDropped: number;
  };
  /** Files moved to a `lost/` directory (their new paths). */
  readonly lost: readonly string[];
  readonly problems: readonly RepairProblem[];
  /**
   * True if data was dropped: an unreadable data block, table or WAL stretch. (A table whose only
   * fault was in a filter or its properties is rewritten whole: nothing is lost.)
   */
  readonly dataLost: boolean;
}

/** The running counts behind a RepairReport. */
export interface RepairCounts {
  tablesFound: number;
  tablesDamaged: number;
  tablesMerged: number;
  tablesUnreadable: number;
  tablesObsolete: number;
  blocksDropped: number;
  bytesDropped: number;
  entriesRead: number;
  superseded: number;
  walFiles: number;
  walRecords: number;
  walEntries: number;
  walRecordsDropped: number;
  walBytesDropped: number;
  walObsolete: number;
}

export function newRepairCounts(): RepairCounts {
  return {
    tablesFound: 0,
    tablesDamaged: 0,
    tablesMerged: 0,
    tablesUnreadable: 0,
    tablesObsolete: 0,
    blocksDropped: 0,
    bytesDropped: 0,
    entriesRead: 0,
    superseded: 0,
    walFiles: 0,
    walRecords: 0,
    walEntries: 0,
    walRecordsDropped: 0,
    walBytesDropped: 0,
    walObsolete: 0,
  };
}
