/**
 * How the CLI opens a database: it must exist (a mistyped directory is an error, not a new empty
 * database), a sharded one with the built-in router its REGIONS file names, and either
 *   - read-only (`get`, `scan`, `stats`): no lock, nothing written, next to a writer that holds
 *     the database open; or
 *   - for writing (`put`, `del`, `compact`, `checkpoint`): the lock taken, so an open database is
 *     LOCKED, said in one line that names the holder and what works meanwhile.
 * `withDatabase` closes it on every path.
 */
import { DB, type OpenOptions } from '../db.js';
import { readRegions } from '../db/db-files.js';
import { isSieveError, ErrorCode, SieveError } from '../errors.js';
import { isNotFound, type FileSystem } from '../fs/file-system.js';
import { builtInRouter } from '../shard/built-in-routers.js';
import type { RegionRouter } from '../shard/region-router.js';
import { currentFileName } from '../version/filenames.js';
import { bareMessage, CliError } from './error-text.js';

/** The router REGIONS names, if the database is sharded with a built-in one. */
function routerOf(fs: FileSystem, dir: string): RegionRouter | undefined {
  const regions = readRegions(fs, dir);
  if (regions.kind === 'plain') return undefined;
  if (regions.kind === 'damaged') throw new CliError(`${dir}: REGIONS is damaged (${regions.reason}): 'sievekv repair' rebuilds it`);
  const router = builtInRouter(regions.routerName);
  if (router !== undefined) return router;
  throw new CliError(`${dir} is sharded with router ${JSON.stringify(regions.routerName)}, which is not built in: open it from the program that defines it`);
}

/** What the writer's lock says, with the commands that work while it is held. */
const LOCK_HINT = '(get, scan, stats and verify read it while it is open)';

/** Loads of the writer's newer state `pinTables` makes before it gives up. */
const PIN_ATTEMPTS = 10;

/**
 * A read-only view opens a table the first time it reads from it; one that the writer compacted
 * away since the view was loaded cannot be opened then (IO_ERROR naming it). Opening every table
 * of the view at once, right after the load, keeps them all readable through their open handles
 * for the rest of the command (up to maxOpenFiles of them), so a long scan reads one state to its
 * end: asking for the distinct-key estimate opens each table for its key sketch. A table already
 * gone: load the writer's newer state and try again.
 */
function pinTables(db: DB): void {
  for (let attempt = 1; ; attempt++) {
    try {
      db.getProperty('sievekv.estimate-num-keys');
      return;
    } catch (err) {
      if (!isSieveError(err, ErrorCode.IO_ERROR) || !isNotFound(err) || attempt === PIN_ATTEMPTS) throw err;
      db.refreshSync();
    }
  }
}

export async function openDatabase(fs: FileSystem, dir: string, mode: 'read-only' | 'write'): Promise<DB> {
  if (!fs.exists(dir)) throw new CliError(`cannot open ${dir}: no such directory`);
  if (!fs.exists(currentFileName(dir))) throw new CliError(`${dir} holds no database (no CURRENT file)`);
  const router = routerOf(fs, dir);
  const options: OpenOptions = { createIfMissing: false, fs, ...(router !== undefined ? { router } : {}), ...(mode === 'read-only' ? { readOnly: true } : {}) };
  try {
    const db = await DB.open(dir, options);
    if (mode === 'read-only') {
      try {
        pinTables(db);
      } catch (err) {
        await db.close();
        throw err;
      }
    }
    return db;
  } catch (err) {
    if (isSieveError(err, ErrorCode.LOCKED)) {
      throw new SieveError(ErrorCode.LOCKED, `${bareMessage(err)} ${LOCK_HINT}`, { cause: err });
    }
    throw err;
  }
}

export async function withDatabase<T>(fs: FileSystem, dir: string, mode: 'read-only' | 'write', work: (db: DB) => Promise<T> | T): Promise<T> {
  const db = await openDatabase(fs, dir, mode);
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}
