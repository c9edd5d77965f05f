/**
 * The background worker thread: runs flush and compaction jobs (jobs.ts) with the real file
 * system and posts each result, or its error, back on the port it was given. Keeps nothing of a
 * job once it has answered; the database's thread decides everything and installs the results.
 *
 * Its first message says it is ready (runner.ts WorkerReady): the runner posts jobs only then, so
 * a worker that fails to start has run none of them.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { NodeFileSystem } from '../fs/node-fs.js';
import { executeJobYielding } from './jobs.js';
import { serializeError } from './job-errors.js';
import type { JobMessage, WorkerReady } from './runner.js';

const port = (workerData as { port: MessagePort }).port;
const fs = new NodeFileSystem();

// Jobs run one at a time, in order (runner.ts), though each lets the event loop turn between its
// steps (job-steps.ts): the next job's message waits in this chain.
let previous: Promise<void> = Promise.resolve();

async function run(message: JobMessage): Promise<void> {
  try {
    port.postMessage({ id: message.id, result: await executeJobYielding(fs, message.job, message.stop) });
  } catch (err) {
    port.postMessage({ id: message.id, error: serializeError(err) });
  }
}

parentPort!.on('message', (message: JobMessage) => {
  // `run` answers every error itself; one it could not answer (postMessage failing) ends the
  // worker as an uncaught exception, and the runner fails its jobs and starts a new one.
  previous = previous
    .then(() => run(message))
    .catch((err: unknown) => {
      setImmediate(() => {
        throw err;
      });
    });
});
port.postMessage({ ready: true } satisfies WorkerReady);
