/**
 * Issue 9, item 5: a job's result is never installed after a background error was latched (the
 * MANIFEST may be what failed; LevelDB stops all background work at bg_error_), yet a flush that
 * finishes while the database closes — stopped, but with no error — is installed. One the close
 * finds not yet finished is abandoned (issue 10): not installed, and nothing latched.
 *
 * BackgroundWork runs here against a host built by hand on MemFileSystem (inline jobs), so the
 * error can be latched at an exact moment: from inside the job, as it creates its output table.
 */
import { describe, expect, it } from 'vitest';
import { BackgroundWork, type BackgroundHost } from '../../src/db/background.js';
import { InfoLog } from '../../src/db/info-log.js';
import { Region } from '../../src/db/region.js';
import { SnapshotList } from '../../src/db/snapshot.js';
import { DBStats } from '../../src/db/stats.js';
import { TableAccess } from '../../src/db/table-access.js';
import { ioError, type SieveError } from '../../src/errors.js';
import type { WritableFile } from '../../src/fs/file-system.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { ValueType } from '../../src/format/internal-key.js';
import { MemTable } from '../../src/memtable/memtable.js';
import { resolveOptions } from '../../src/options.js';
import { BlockCache } from '../../src/sstable/block-cache.js';
import { VersionSet } from '../../src/version/version-set.js';

const DIR = '/db';

/**
 * Calls `onTableCreate` when a table file is created (a job's output), and `onDirSync` when a
 * directory is synced (a job's last step, its table complete), once armed.
 */
class HookedFileSystem extends MemFileSystem {
  onTableCreate: ((path: string) => void) | null = null;
  onDirSync: (() => void) | null = null;

  override createWritable(path: string): WritableFile {
    if (path.endsWith('.ldb') && this.onTableCreate !== null) {
      const hook = this.onTableCreate;
      this.onTableCreate = null;
      hook(path);
    }
    return super.createWritable(path);
  }

  override syncDir(dir: string): void {
    const hook = this.onDirSync;
    this.onDirSync = null;
    hook?.();
    super.syncDir(dir);
  }
}

interface Harness {
  fs: HookedFileSystem;
  bg: BackgroundWork;
  versions: VersionSet;
  region: Region;
  latched: () => SieveError | null;
  latchNow: () => void;
  close: () => Promise<void>;
  log: () => string;
}

function harness(): Harness {
  const fs = new HookedFileSystem();
  fs.mkdir(DIR);
  const options = resolveOptions({ fs, writeBufferSize: 4096, maxFileSize: 4096, blockSize: 1024 });
  const versions = new VersionSet(DIR, fs, 1);
  versions.createNew();
  versions.recover();
  const stats = new DBStats(1);
  const region = new Region(0, DIR, () => new MemTable());
  const info = new InfoLog(fs, DIR);
  let error: SieveError | null = null;
  let closed = false;
  const host: BackgroundHost = {
    options,
    versions,
    regions: [region],
    tables: [new TableAccess(fs, DIR, 0, options, stats, new BlockCache(1 << 20))],
    snapshots: new SnapshotList(),
    stats,
    info,
    latch: (err) => (error ??= err as SieveError),
    stopped: () => error !== null || closed,
    deleteObsoleteFiles: () => {},
    backgroundError: () => error,
  };
  const bg = new BackgroundWork(host);
  return {
    fs,
    bg,
    versions,
    region,
    latched: () => error,
    // As the write path latches a WAL failure: not through BackgroundWork.
    latchNow: () => void (error ??= ioError('append failed: ENOSPC (injected)')),
    close: async () => {
      closed = true;
      await bg.close();
      versions.close();
      info.close();
    },
    log: () => Buffer.from(fs.readFile(`${DIR}/LOG`)).toString(),
  };
}

let sequence = 0;
/** Makes `region.imm` a memtable of `n` keys from `first` and flushes it; resolves when done. */
async function flush(h: Harness, first: number, n: number): Promise<void> {
  const mem = new MemTable();
  for (let i = first; i < first + n; i++) mem.add(++sequence, ValueType.VALUE, Buffer.from(`key${String(i).padStart(5, '0')}`), Buffer.alloc(60, i));
  h.region.imm = mem;
  h.bg.startFlush(h.versions.logNumber);
  await h.bg.whenFlushed();
}

const tableFiles = (fs: MemFileSystem): string[] => fs.list(DIR).filter((n) => n.endsWith('.ldb'));
const levels = (v: VersionSet): number[] => [0, 1, 2].map((l) => v.current.numFiles(0, l));

describe('nothing is installed after a latched error', () => {
  it('a merge that finishes after an error was latched is discarded, its outputs removed', async () => {
    const h = harness();
    await flush(h, 0, 40);
    await flush(h, 20, 40);
    await flush(h, 10, 40);
    expect(levels(h.versions)).toEqual([3, 0, 0]);
    const before = tableFiles(h.fs);
    const created: string[] = [];
    h.fs.onTableCreate = (path) => {
      created.push(path);
      h.latchNow();
    };
    await h.bg.compactRange(undefined, undefined);
    expect(created).toHaveLength(1); // the merge ran, and wrote its output
    expect(h.latched()).not.toBeNull();
    expect(levels(h.versions)).toEqual([3, 0, 0]); // …which was not installed
    expect(tableFiles(h.fs)).toEqual(before);
    expect(h.bg.pendingOutputs.size).toBe(0);
    expect(h.bg.compacting).toBe(false);
    expect(h.log()).toMatch(/compaction of region 0 level 0 discarded: a background error is latched/);
    await h.close();
  });

  it('a flush that finishes after an error was latched is discarded; its memtable stays', async () => {
    const h = harness();
    await flush(h, 0, 40);
    h.fs.onTableCreate = () => h.latchNow();
    await flush(h, 100, 40);
    expect(h.latched()).not.toBeNull();
    expect(levels(h.versions)).toEqual([1, 0, 0]);
    expect(tableFiles(h.fs)).toHaveLength(1);
    expect(h.region.imm?.count).toBe(40); // still readable, and its WAL is still there to replay
    expect(h.bg.flushing).toBe(false);
    expect(h.bg.pendingOutputs.size).toBe(0);
    expect(h.log()).toMatch(/flush to tables \d+ discarded: a background error is latched/);
    await h.close();
  });

  it('a flush finishing while the database closes (stopped, no error) is installed', async () => {
    const h = harness();
    await flush(h, 0, 40);
    const versions = h.versions;
    let closing: Promise<void> | undefined;
    // The close starts while the job runs, past its last look at the stop flag (its table is
    // written; it syncs the directory): the job finishes, and its result is installed.
    h.fs.onDirSync = () => void (closing = h.close());
    await flush(h, 100, 30);
    await closing;
    expect(h.latched()).toBeNull();
    expect(levels(versions)).toEqual([2, 0, 0]);
  });

  it('a flush not yet started when the database closes is abandoned: nothing installed, nothing latched', async () => {
    const h = harness();
    await flush(h, 0, 40);
    const mem = new MemTable();
    for (let i = 0; i < 30; i++) mem.add(++sequence, ValueType.VALUE, Buffer.from(`late${i}`), Buffer.from('v'));
    h.region.imm = mem;
    h.bg.startFlush(h.versions.logNumber);
    const versions = h.versions;
    const logNumber = versions.logNumber;
    expect(h.bg.flushing).toBe(true);
    await h.close(); // the job waits for its turn on this thread: it stops before it begins
    expect(h.bg.flushing).toBe(false);
    expect(h.latched()).toBeNull();
    expect(levels(versions)).toEqual([1, 0, 0]);
    expect(versions.logNumber).toBe(logNumber); // its WAL stays live, for the next open to replay
    expect(tableFiles(h.fs)).toHaveLength(1);
    expect(h.bg.pendingOutputs.size).toBe(0);
    expect(h.log()).toMatch(/flush to tables \d+ discarded: the database is closing/);
  });
});
