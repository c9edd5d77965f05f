#!/usr/bin/env node
// The `sievekv` bin: all the work is src/tools/cli.ts's `main`; this only connects the process:
// its arguments, its streams, and how progress shows — a bar when stderr is a terminal, lines
// when it is not; SIEVEKV_PROGRESS=bar|lines|none decides otherwise, and
// SIEVEKV_PROGRESS_DELAY_MS how long work runs before any shows.
import { main } from '../src/tools/cli.js';
import { progressMode } from '../src/tools/progress.js';
process.stdout.on('error', (err: NodeJS.ErrnoException) => process.exit(err.code === 'EPIPE' ? 0 : 1));
const delay = Number(process.env.SIEVEKV_PROGRESS_DELAY_MS);
process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  progress: progressMode(process.env.SIEVEKV_PROGRESS, process.stderr.isTTY === true),
  ...(process.env.SIEVEKV_PROGRESS_DELAY_MS !== undefined && Number.isFinite(delay) && delay >= 0 ? { progressTiming: { delayMs: delay } } : {}),
  stdoutIsTTY: process.stdout.isTTY === true,
});
