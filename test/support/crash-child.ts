/**
 * A child process running test/support/crash-writer.ts, as the SIGKILL tests and `npm run
 * torture` start it: it prints `open` once the database is open, then `ack <batch>` for every
 * batch the database acknowledged, and waits for `go` on stdin before writing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const WRITER = fileURLToPath(new URL('./crash-writer.ts', import.meta.url));

export interface CrashChild {
  proc: ChildProcess;
  /** Batches acknowledged so far, in order. */
  acked: number[];
  /** Resolves once the child opened its database (or is gone). */
  opened: Promise<void>;
  /** Resolves once `n` batches were acknowledged (or the process is gone). */
  acks(n: number): Promise<void>;
  /** The exit code (null when killed by a signal), once the process is gone and its pipes drained. */
  exited: Promise<number | null>;
  stderr: string[];
}

export function startCrashChild(dir: string, run: number, seed: number, sharded: boolean): CrashChild {
  return startWriterChild(WRITER, [dir, String(run), String(seed), ...(sharded ? ['dezhou'] : [])]);
}

/**
 * Starts `writer` (a TypeScript file speaking the same protocol: `open`, `ack <batch>`, `go` on
 * stdin) with `args`; `onLine` sees every other line it prints.
 */
export function startWriterChild(writer: string, args: readonly string[], onLine?: (line: string) => void): CrashChild {
  const proc = spawn(process.execPath, ['--import', 'tsx', writer, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  const acked: number[] = [];
  const stderr: string[] = [];
  let openedResolve!: () => void;
  const opened = new Promise<void>((r) => (openedResolve = r));
  let ackWaiters: { n: number; resolve: () => void }[] = [];
  const settleAcks = (gone: boolean): void => {
    const due = ackWaiters.filter((w) => gone || w.n <= acked.length);
    ackWaiters = ackWaiters.filter((w) => !due.includes(w));
    for (const w of due) w.resolve();
  };
  let gone = false;
  const acks = (n: number): Promise<void> =>
    new Promise((resolve) => {
      ackWaiters.push({ n, resolve });
      settleAcks(gone);
    });
  let partial = '';
  proc.stdout!.setEncoding('utf8');
  proc.stdout!.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (line === 'open') openedResolve();
      else if (line.startsWith('ack ')) {
        acked.push(Number(line.slice(4)));
        settleAcks(false);
      }
      else onLine?.(line);
    }
  });
  proc.stderr!.setEncoding('utf8');
  proc.stderr!.on('data', (chunk: string) => stderr.push(chunk));
  proc.stdin!.on('error', () => {}); // the child may be dead before we write
  // 'close', not 'exit': the process may be gone while its last acks still wait in the stdout
  // pipe, and a missed ack would let a lost batch pass unnoticed. 'close' comes after stdout's end.
  const exited = new Promise<number | null>((resolve) => proc.once('close', (code) => resolve(code)));
  void exited.then(() => {
    gone = true;
    openedResolve();
    settleAcks(true);
  });
  return { proc, acked, opened, acks, exited, stderr };
}

/**
 * Sends `go`, then SIGKILLs the child 2–101 ms after one of three moments: the go (30% of runs:
 * sometimes during its recovery), its open (40%), or its k-th acknowledged batch, k = 1–16 (30%:
 * kills that land while batches are being written however slowly the child starts, on a busy
 * machine). Resolves with its exit code (null: our signal killed it) and whether the delay
 * counted from the open or later.
 */
export async function goThenKill(child: CrashChild, next: () => number): Promise<{ code: number | null; fromOpen: boolean }> {
  child.proc.stdin!.write('go\n');
  const moment = next();
  if (moment >= 0.7) await child.acks(1 + Math.floor(next() * 16));
  else if (moment >= 0.3) await child.opened;
  await new Promise((resolve) => setTimeout(resolve, 2 + Math.floor(next() * 100)));
  child.proc.kill('SIGKILL');
  return { code: await child.exited, fromOpen: moment >= 0.3 };
}
