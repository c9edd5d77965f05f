/**
 * The worker-thread side of test/fs/node-lock.test.ts: opens the database in `workerData.dir`
 * and posts `{ opened: true }`, or `{ opened: false, code, message }` if the open failed. An open
 * database stays open until the parent posts any message, then is closed and `{ closed: true }`
 * is posted.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { DB } from '../../src/db.js';
import { isSieveError } from '../../src/errors.js';

const port = parentPort!;
const { dir } = workerData as { dir: string };
try {
  const db = await DB.open(dir);
  port.once('message', () => {
    void db.close().then(() => port.postMessage({ closed: true }));
  });
  port.postMessage({ opened: true });
} catch (err) {
  port.postMessage({ opened: false, code: isSieveError(err) ? err.code : 'other', message: String(err) });
}
