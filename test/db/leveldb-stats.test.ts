/**
 * `getProperty('leveldb.stats')`: LevelDB's text table, one line per level with files or work,
 * whose figures are the ones `sievekv.stats` (still JSON) reports: files and bytes per level,
 * flushes as level 0's writes, each merge's bytes read and written at the level it wrote.
 */
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { formatLevelStats } from '../../src/db/leveldb-stats.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';

interface Row {
  level: number;
  files: number;
  sizeMB: number;
  timeSec: number;
  readMB: number;
  writeMB: number;
}

function parse(text: string): Row[] {
  const lines = text.trimEnd().split('\n');
  expect(lines.slice(0, 3)).toEqual([
    '                               Compactions',
    'Level  Files Size(MB) Time(sec) Read(MB) Write(MB)',
    '--------------------------------------------------',
  ]);
  return lines.slice(3).map((line) => {
    const [level, files, sizeMB, timeSec, readMB, writeMB] = line.trim().split(/\s+/).map(Number);
    return { level: level!, files: files!, sizeMB: sizeMB!, timeSec: timeSec!, readMB: readMB!, writeMB: writeMB! };
  });
}

const mb = (bytes: number): number => Number((bytes / 1048576).toFixed(2));

describe('leveldb.stats', () => {
  it("is LevelDB's per-level table, with the figures sievekv.stats reports as JSON", async () => {
    const db = await DB.open('/db', { fs: new MemFileSystem(), writeBufferSize: 64 * 1024, maxFileSize: 32 * 1024, compression: 'none' });
    expect(parse(db.getProperty('leveldb.stats')!)).toEqual([]);
    for (let i = 0; i < 20_000; i++) db.putSync(`key-${String(i).padStart(6, '0')}`, `value ${i} `.repeat(4));
    await db.compactRange();
    for (let i = 0; i < 3000; i++) db.putSync(`key-${String(i * 5).padStart(6, '0')}`, 'again');
    await db.compactRange('key-000000', 'key-001000');
    const rows = parse(db.getProperty('leveldb.stats')!);
    const stats = JSON.parse(db.getProperty('sievekv.stats')!) as {
      bytesFlushed: number;
      levels: { level: number; files: number; bytes: number; bytesRead: number; bytesWritten: number; micros: number }[];
    };
    expect(rows.length).toBeGreaterThan(1);
    expect(rows.some((r) => r.readMB > 0)).toBe(true);
    for (const row of rows) {
      const l = stats.levels.find((x) => x.level === row.level)!;
      expect(row.files).toBe(Number(db.getProperty(`leveldb.num-files-at-level${row.level}`)));
      expect(row.files).toBe(l.files);
      expect(row.sizeMB).toBe(mb(l.bytes));
      expect(row.readMB).toBe(mb(l.bytesRead));
      expect(row.writeMB).toBe(mb(l.bytesWritten + (row.level === 0 ? stats.bytesFlushed : 0)));
      expect(row.timeSec).toBe(Number((l.micros / 1e6).toFixed(2)));
    }
    // Merges took time, counted at the level they wrote.
    expect(stats.levels.some((l) => l.bytesWritten > 0)).toBe(true);
    expect(stats.levels.filter((l) => l.bytesWritten > 0).every((l) => l.micros > 0)).toBe(true);
    // Levels with neither files nor work are left out.
    for (const l of stats.levels) if (l.files > 0) expect(rows.map((r) => r.level)).toContain(l.level);
    expect(db.getProperty('sievekv.stats')!.startsWith('{')).toBe(true);
    await db.close();
  });

  it('lays each row out in the columns of the header', () => {
    const text = formatLevelStats([
      { level: 0, files: 3, bytes: 5 * 1048576, micros: 1_500_000, bytesRead: 0, bytesWritten: 7.5 * 1048576 },
      { level: 1, files: 12, bytes: 123.456 * 1048576, micros: 0, bytesRead: 1048576 * 1024, bytesWritten: 1048576 * 1000 },
    ]);
    expect(text.split('\n').slice(3)).toEqual([
      '  0        3     5.00      1.50     0.00      7.50',
      '  1       12   123.46      0.00  1024.00   1000.00',
      '',
    ]);
  });
});
