/**
 * bench/worker-start: how long a background worker takes to start — from `new Worker` to the
 * message saying it is ready for jobs — and the CPU the process spends meanwhile (the worker's
 * start-up runs on the second core, beside the database's thread). A job submitted before that
 * waits: the first flush, or the first merge after an open.
 *
 *   npm run build && node dist/bench/worker-start.js [starts=5]
 */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import { startJobWorker } from '../src/compaction/runner.js';

const starts = Number(process.argv[2] ?? 5);
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: new URL('../..', import.meta.url), encoding: 'utf8' }).trim();
} catch {
  // not a checkout
}
console.log(`bench/worker-start: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown'}, load ${loadavg()[0]!.toFixed(2)}, commit ${commit}`);
for (let i = 0; i < starts; i++) {
  const { port1, port2 } = new MessageChannel();
  const began = performance.now();
  const cpu = process.cpuUsage();
  const worker = startJobWorker(port2);
  await new Promise<void>((resolve) => port1.once('message', () => resolve()));
  const used = process.cpuUsage(cpu);
  console.log(`start ${i + 1}: ready after ${(performance.now() - began).toFixed(1)} ms, process CPU ${((used.user + used.system) / 1000).toFixed(1)} ms`);
  port1.close();
  await worker.terminate();
}
