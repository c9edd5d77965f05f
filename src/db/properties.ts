/**
 * Derived figures for `getProperty`: per-level files and bytes, and the distinct-key estimate.
 */
import { HyperLogLog } from '../filter/hyperloglog.js';
import { KEY_SKETCH_PRECISION } from '../sstable/table-properties.js';
import { NUM_LEVELS } from '../version/version-edit.js';
import type { DBImpl } from './db-impl.js';

export interface LevelFigures {
  level: number;
  files: number;
  bytes: number;
}

/** Files and bytes per level, summed over regions (levels with no files omitted). */
export function levelSummary(db: DBImpl, region?: number): LevelFigures[] {
  const v = db.versions.current;
  const out: LevelFigures[] = [];
  for (let level = 0; level < NUM_LEVELS; level++) {
    let files = 0;
    let bytes = 0;
    for (let r = 0; r < db.regions.length; r++) {
      if (region !== undefined && r !== region) continue;
      files += v.numFiles(r, level);
      bytes += v.levelBytes(r, level);
    }
    if (files > 0) out.push({ level, files, bytes });
  }
  return out;
}

/**
 * Distinct user keys, estimated by merging the HyperLogLog sketches every table carries with a
 * sketch of the memtables' keys — not a sum of entry counts, which counts a key once per version
 * and per file. Tables without a sketch (LevelDB-made) add their entry count instead.
 */
export function estimateNumKeys(db: DBImpl, region?: number): number {
  const sketch = new HyperLogLog(KEY_SKETCH_PRECISION);
  let unsketched = 0;
  const v = db.versions.current;
  db.regions.forEach((r, i) => {
    if (region !== undefined && i !== region) return;
    for (const mem of [r.mem, r.imm]) {
      if (mem === null) continue;
      const it = mem.iterator();
      for (it.seekToFirst(); it.valid; it.next()) sketch.add(it.key);
    }
    for (let level = 0; level < NUM_LEVELS; level++) {
      for (const f of v.files(i, level)) {
        const props = db.tables[i]!.cache.findTable(f.number, f.fileSize).properties;
        if (props?.keySketch !== undefined) sketch.merge(props.keySketch);
        else unsketched += props?.numEntries ?? 0;
      }
    }
  });
  return Math.round(sketch.count()) + unsketched;
}
