/**
 * What a memtable switch does with the WAL it leaves.
 *
 * - The old WAL is synced before anything is appended to the new one (a later synced write syncs
 *   only the new WAL: without it a crash could keep that write and lose earlier ones). A writer
 *   that has to wait for the previous flush syncs the full WAL while it waits, so the switch after
 *   the wait finds it synced and does not sync it again.
 */
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import type { WritableFile } from '../../src/fs/file-system.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { putBatch } from '../support/scattered-keys.js';

type Event = { op: 'create' | 'append' | 'sync'; file: string };

/** MemFileSystem recording creations, appends and syncs of writable files, in order. */
class RecordingFileSystem extends MemFileSystem {
  readonly events: Event[] = [];

  override createWritable(path: string): WritableFile {
    const file = super.createWritable(path);
    const events = this.events;
    const name = path.slice(path.lastIndexOf('/') + 1);
    events.push({ op: 'create', file: name });
    return {
      append(data, start, end) {
        events.push({ op: 'append', file: name });
        file.append(data, start, end);
      },
      sync() {
        events.push({ op: 'sync', file: name });
        file.sync();
      },
      syncAsync() {
        events.push({ op: 'sync', file: name });
        return file.syncAsync();
      },
      get size() {
        return file.size;
      },
      close() {
        file.close();
      },
    };
  }
}

const isWal = (name: string): boolean => name.endsWith('.log');
const isTable = (name: string): boolean => name.endsWith('.ldb');

describe('the WAL a memtable switch leaves', () => {
  it('is synced before the new WAL gets a record, once, and while the writer waits for the previous flush', async () => {
    const fs = new RecordingFileSystem();
    const db = await DB.open('/db', { fs, writeBufferSize: 16 * 1024 });
    // A loop that never yields: the flush a switch starts (inline on this file system) runs only
    // when the next switch has to wait for it.
    for (let i = 0; i < 3000; i += 50) db.batchSync(putBatch(i, 50));
    await db.close();

    const wals = [...new Set(fs.events.filter((e) => isWal(e.file) && e.op === 'create').map((e) => e.file))];
    expect(wals.length).toBeGreaterThan(4);
    let waitedSyncs = 0;
    for (let w = 0; w + 1 < wals.length; w++) {
      const [old, next] = [wals[w]!, wals[w + 1]!];
      const oldEvents = fs.events.map((e, i) => ({ ...e, i })).filter((e) => e.file === old);
      const lastAppend = oldEvents.filter((e) => e.op === 'append').at(-1);
      if (lastAppend === undefined) continue; // no records: nothing to sync
      const syncs = oldEvents.filter((e) => e.op === 'sync' && e.i > lastAppend.i);
      const firstNextAppend = fs.events.findIndex((e) => e.file === next && e.op === 'append');
      expect(syncs.length, `${old}: synced once after its last record`).toBe(1);
      if (firstNextAppend >= 0) expect(syncs[0]!.i, `${old} synced before ${next} gets a record`).toBeLessThan(firstNextAppend);
      // Between that sync and the new WAL's creation, a table written: the flush the writer waited
      // for ran after the sync, not before it.
      const created = fs.events.findIndex((e) => e.file === next && e.op === 'create');
      if (fs.events.slice(syncs[0]!.i, created).some((e) => isTable(e.file) && e.op === 'create')) waitedSyncs++;
    }
    expect(waitedSyncs, 'switches whose WAL was synced while the writer waited for a flush').toBeGreaterThan(2);
  });
});
