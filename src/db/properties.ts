/**
 * Derived figures for `getProperty`: per-level files and bytes, and the distinct-key estimate.
 */
import { HyperLogLog } from '../filter/hyperloglog.js';
import { addKeyToSketch, newKeySketch } from '../sstable/key-sketch.js';
import { NUM_LEVELS, type FileMetaData } from '../version/version-edit.js';
import { INTERNAL_KEY_TRAILER_SIZE } from '../format/internal-key.js';
import type { DBImpl } from './db-impl.js';
import type { LevelWork } from './background.js';

export interface LevelFigures {
  level: number;
  files: number;
  bytes: number;
  /** Compactions into this level since open, and the bytes they read and wrote. */
  compactions: number;
  bytesRead: number;
  bytesWritten: number;
}

/** Files and bytes per level, summed over regions (levels with no files omitted). */
export function levelSummary(db: DBImpl, region?: number): LevelFigures[] {
  return levelTotals(db, region).filter((l) => l.files > 0 || l.compactions > 0);
}

/**
 * Every level's files and bytes and the work of compactions into it since the open (time, bytes
 * read and written), summed over the regions (or of `region` alone).
 */
export function levelTotals(db: DBImpl, region?: number): (LevelFigures & { micros: number })[] {
  const v = db.versions.current;
  const out: (LevelFigures & { micros: number })[] = [];
  for (let level = 0; level < NUM_LEVELS; level++) {
    let files = 0;
    let bytes = 0;
    const work: LevelWork = { compactions: 0, bytesRead: 0, bytesWritten: 0, micros: 0 };
    for (let r = 0; r < db.regions.length; r++) {
      if (region !== undefined && r !== region) continue;
      files += v.numFiles(r, level);
      bytes += v.levelBytes(r, level);
      const w = db.background.levelWork[r]![level]!;
      work.compactions += w.compactions;
      work.bytesRead += w.bytesRead;
      work.bytesWritten += w.bytesWritten;
      work.micros += w.micros;
    }
    out.push({ level, files, bytes, ...work });
  }
  return out;
}

/** Sketches of tables that carry none (LevelDB-made), by region and file number: a scan each, once. */
const scannedSketches = new WeakMap<DBImpl, Map<string, HyperLogLog>>();

/**
 * The key sketch, under the key hash, of a table that carries no sketch (LevelDB-made): made by
 * scanning it, once per process.
 */
function scannedSketchOf(db: DBImpl, region: number, file: FileMetaData): HyperLogLog {
  let cache = scannedSketches.get(db);
  if (cache === undefined) scannedSketches.set(db, (cache = new Map()));
  const id = `${region}/${file.number}`;
  let sketch = cache.get(id);
  if (sketch === undefined) {
    sketch = newKeySketch();
    const it = db.tables[region]!.newIterator(file);
    try {
      for (it.seekToFirst(); it.valid(); it.next()) {
        const key = it.key();
        addKeyToSketch(sketch, key, 0, key.length - INTERNAL_KEY_TRAILER_SIZE);
      }
    } finally {
      it.close();
    }
    cache.set(id, sketch);
  }
  return sketch;
}

/**
 * Write amplification since open: bytes written to tables (flushes and compactions) per byte of
 * user data written. 0 before any write.
 */
export function writeAmplification(db: DBImpl): number {
  const user = db.stats.bytesWritten;
  if (user === 0) return 0;
  let tables = db.stats.bytesFlushed;
  for (const levels of db.background.levelWork) for (const w of levels) tables += w.bytesWritten;
  return Math.round((tables / user) * 100) / 100;
}

/**
 * Distinct user keys, estimated by merging the HyperLogLog sketches every table carries with a
 * sketch of the memtables' keys — not a sum of entry counts, which counts a key once per version
 * and per file. A table without a sketch (LevelDB-made) is scanned once for one. Deleted keys
 * still count until compaction drops them, as in RocksDB's estimate. Tables written before
 * `sievekv.keysketch2` carry sketches under another hash: those merge among themselves and their
 * count is added (a key both in such a table and elsewhere counts twice until compaction rewrites
 * the table), rather than every such table being read whole.
 */
export function estimateNumKeys(db: DBImpl, region?: number): number {
  const sketch = newKeySketch();
  let legacy: HyperLogLog | undefined;
  const v = db.versions.current;
  db.regions.forEach((r, i) => {
    if (region !== undefined && i !== region) return;
    for (const mem of [r.mem, r.imm]) {
      if (mem === null) continue;
      const it = mem.iterator();
      for (it.seekToFirst(); it.valid; it.next()) addKeyToSketch(sketch, it.key, 0, it.key.length);
    }
    for (let level = 0; level < NUM_LEVELS; level++) {
      for (const f of v.files(i, level)) {
        const props = db.tables[i]!.cache.findTable(f.number, f.fileSize).properties;
        if (props?.keySketch !== undefined) sketch.merge(props.keySketch);
        else if (props?.murmurKeySketch !== undefined) (legacy ??= new HyperLogLog(props.murmurKeySketch.precision)).merge(props.murmurKeySketch);
        else sketch.merge(scannedSketchOf(db, i, f));
      }
    }
  });
  return Math.round(sketch.count()) + (legacy === undefined ? 0 : Math.round(legacy.count()));
}

/** Per-region figures for `sievekv.regions`, so the skew of a router's split is visible. */
export interface RegionFigures {
  region: number;
  directory: string;
  estimatedKeys: number;
  bytes: number;
  memtableBytes: number;
  levels: LevelFigures[];
  gets: number;
  filterChecks: number;
  filterNegatives: number;
  filterFalsePositives: number;
  blocksRead: number;
  blockCacheHits: number;
}

export function regionFigures(db: DBImpl): RegionFigures[] {
  return db.regions.map((r, i) => {
    const levels = levelSummary(db, i);
    const t = db.stats.regionTables[i]!;
    return {
      region: i,
      directory: r.dir,
      estimatedKeys: estimateNumKeys(db, i),
      bytes: levels.reduce((sum, l) => sum + l.bytes, 0),
      memtableBytes: r.mem.approximateMemoryUsage + (r.imm?.approximateMemoryUsage ?? 0),
      levels,
      gets: db.stats.regionGets[i]!,
      filterChecks: t.filterChecks,
      filterNegatives: t.filterNegatives,
      filterFalsePositives: t.filterFalsePositives,
      blocksRead: t.blocksRead,
      blockCacheHits: t.blockCacheHits,
    };
  });
}
