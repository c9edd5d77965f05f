#!/usr/bin/env node
// The `sievekv` bin: all the work is src/tools/cli.ts's `main`; this only connects the process.
import { main } from '../src/tools/cli.js';
process.stdout.on('error', (err: NodeJS.ErrnoException) => process.exit(err.code === 'EPIPE' ? 0 : 1));
process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
