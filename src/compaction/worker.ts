/**
 * The background worker thread: runs flush and compaction jobs (jobs.ts) with the real file
 * system and posts each result, or its error, back on the port it was given. Stateless between
 * jobs; the database's thread decides everything and installs the results.
 *
 * Its first message says it is ready (runner.ts WorkerReady): the runner posts jobs only then, so
 * a worker that fails to start has run none of them.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { NodeFileSystem } from '../fs/node-fs.js';
import { executeJob } from './jobs.js';
import { serializeError } from './job-errors.js';
import type { JobMessage, WorkerReady } from './runner.js';

const port = (workerData as { port: MessagePort }).port;
const fs = new NodeFileSystem();

parentPort!.on('message', (message: JobMessage) => {
  try {
    port.postMessage({ id: message.id, result: executeJob(fs, message.job, message.stop) });
  } catch (err) {
    port.postMessage({ id: message.id, error: serializeError(err) });
  }
});
port.postMessage({ ready: true } satisfies WorkerReady);
