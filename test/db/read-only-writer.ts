/**
 * The writer child of the read-only tests (test/db/read-only.test.ts), started with
 * test/support/crash-child.ts's startWriterChild:
 *   node --import tsx test/db/read-only-writer.ts <dir>
 * It opens (creating) the database in <dir> with small memtables and files, so that writes make
 * WAL switches, flushes and compactions, prints `open`, then runs one command per stdin line and
 * prints `ack <n>` (n counting from 0) once the command is done:
 *   put <from> <to> <tag>   keys key-<i> for from ≤ i < to get the value `<tag>-<i>-…` (batches of 50)
 *   del <from> <to>         deletes key-<i> for from ≤ i < to
 *   compact                 db.compactRange(): flushes, merges, deletes the tables it replaced
 *   close                   closes the database and exits
 * Each write is acknowledged only once visible to the writer; unsynced, so it is in the WAL
 * file (the page cache) before its ack, which is all a reader on the same machine needs.
 */
import { DB } from '../../src/db.js';

export const READ_ONLY_WRITER_OPTIONS = {
  writeBufferSize: 16 * 1024,
  maxFileSize: 16 * 1024,
  compression: 'lz4',
} as const;

/** The key and value the writer writes for `i` under `tag`. */
export function writerKey(i: number): string {
  return `key-${String(i).padStart(6, '0')}`;
}
export function writerValue(tag: string, i: number): string {
  return `${tag}-${i}-${'v'.repeat(i % 37)}`;
}

async function main(dir: string): Promise<void> {
  const db = await DB.open(dir, READ_ONLY_WRITER_OPTIONS);
  process.stdout.write('open\n');
  let acks = 0;
  let queue = Promise.resolve();
  let partial = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      queue = queue
        .then(async () => {
          await run(db, line.split(' '));
          process.stdout.write(`ack ${acks++}\n`);
          if (line === 'close') process.exit(0);
        })
        .catch(fail);
    }
  });
}

function fail(err: unknown): never {
  process.stderr.write(`read-only-writer failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
}

async function run(db: DB, [command, ...args]: string[]): Promise<void> {
  switch (command) {
    case 'put':
    case 'del': {
      const from = Number(args[0]);
      const to = Number(args[1]);
      for (let i = from; i < to; i += 50) {
        const ops = [];
        for (let j = i; j < Math.min(to, i + 50); j++) {
          ops.push(command === 'put' ? { type: 'put' as const, key: writerKey(j), value: writerValue(args[2]!, j) } : { type: 'del' as const, key: writerKey(j) });
        }
        await db.batch(ops);
      }
      return;
    }
    case 'compact':
      await db.compactRange();
      return;
    case 'close':
      await db.close();
      return;
    default:
      throw new Error(`unknown command ${command}`);
  }
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  main(process.argv[2]!).catch(fail);
}
