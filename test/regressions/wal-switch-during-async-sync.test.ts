/**
 * Found by the model test on real files (test/model/db-model-worker.test.ts, seed 1592598566,
 * its first run): `IO_ERROR: sync failed: EBADF` on a WAL, latched, and every later write refused.
 *
 * An async writer with `sync: true` leads a group: it appends the group to the WAL and awaits
 * fdatasync on the thread pool. A sync twin (`putSync`) issued meanwhile finishes that group with
 * a blocking fdatasync and commits; a later write finds the memtable full, switches to a new WAL
 * and closed the old one. The async fdatasync, if it had not run yet (the thread pool was busy),
 * then ran on a closed descriptor (fixed in 7458a03: the WAL stays open until it settles): EBADF — or, when the number was reused meanwhile, on whatever
 * holds it now: EINVAL for a worker's pipe (seen here), or another file synced, silently. The
 * error rejects the group's writers and is latched, although their bytes were already synced.
 *
 * The file system here is the real one with each asynchronous fdatasync held back until the test
 * lets it go, which makes the thread pool's delay certain. The WAL must not be closed while an
 * fdatasync issued on it is outstanding (wait for it, or let the switch take over its duty).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import type { WritableFile } from '../../src/fs/file-system.js';
import { NodeFileSystem } from '../../src/fs/node-fs.js';

const root = mkdtempSync(join(tmpdir(), 'sievekv-switch-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** NodeFileSystem whose asynchronous fdatasyncs wait for `release()`; records a sync issued on a file closed before it ran. */
class HeldSyncFileSystem extends NodeFileSystem {
  readonly #held: (() => void)[] = [];
  readonly syncsAfterClose: string[] = [];

  release(): void {
    for (const run of this.#held.splice(0)) run();
  }

  override createWritable(path: string): WritableFile {
    const file = super.createWritable(path);
    let closed = false;
    const held = this.#held;
    const afterClose = this.syncsAfterClose;
    return {
      get size() {
        return file.size;
      },
      append: (data, start, end) => file.append(data, start, end),
      sync: () => file.sync(),
      syncAsync: () =>
        new Promise<void>((resolve, reject) => {
          held.push(() => {
            if (closed) afterClose.push(path);
            file.syncAsync().then(resolve, reject);
          });
        }),
      close: () => {
        closed = true;
        file.close();
      },
    };
  }
}

it('a WAL switched while an async fdatasync of it is outstanding: no sync on a closed file, no latched error', async () => {
  const fs = new HeldSyncFileSystem();
  const db = await DB.open(join(root, 'db'), { fs, writeBufferSize: 1024 });
  try {
    const synced = db.put('async-synced', 'a', { sync: true }); // leads a group; its fdatasync is held
    db.putSync('twin', 'y'.repeat(1500)); // finishes that group (blocking fdatasync); fills the memtable
    db.putSync('twin-2', 'z'); // switches to a new WAL: the old one is closed
    fs.release(); // the held fdatasync of the old WAL runs now
    let error: unknown;
    await synced.catch((err: unknown) => (error = err));
    expect(fs.syncsAfterClose, 'fdatasync issued on a WAL closed before it ran').toEqual([]);
    expect(error, 'the async synced write').toBeUndefined();
    // Before 7458a03: IO_ERROR: sync failed: EINVAL or EBADF (…/000002.log), latched: every write refused.
    const after = db.put('after', 'b', { sync: true });
    fs.release();
    await after;
    expect((await db.get('async-synced'))?.toString()).toBe('a');
    expect((await db.get('after'))?.toString()).toBe('b');
  } finally {
    fs.release();
    await db.close().catch(() => undefined);
  }
});
