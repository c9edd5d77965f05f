/**
 * Running RocksDB's command-line tools (Debian's `rocksdb-tools`: `ldb`, `sst_dump`) from the
 * interop tests, and parsing what they print. Not a test file.
 *
 * The tools must be installed: a missing tool is a failure with a message saying how to install
 * it (CI's `.ci/run` does), never a skip, so that "RocksDB reads sievekv's tables" stays tested.
 */
import { spawnSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { basename, join } from 'node:path';

const INSTALL_HINT = "install RocksDB's tools: apt-get install -y rocksdb-tools (.ci/run installs them before npm test)";

export interface ToolRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `tool args…`; throws, naming the package to install, if the tool is not on PATH. */
export function runTool(tool: 'ldb' | 'sst_dump', args: readonly string[]): ToolRun {
  const r = spawnSync(tool, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.error !== undefined) {
    if ((r.error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`${tool} not found on PATH: ${INSTALL_HINT}`);
    throw r.error;
  }
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

let toolsChecked = false;

/**
 * Throws a clear error unless both `ldb` and `sst_dump` can be run. Call it in each test that
 * needs them (not in a hook, whose failure reports the tests as skipped).
 */
export function requireRocksDbTools(): void {
  if (toolsChecked) return;
  for (const tool of ['ldb', 'sst_dump'] as const) runTool(tool, ['--help']);
  toolsChecked = true;
}

/** One `key : value` pair of `ldb scan --hex`, as lower-case hex. */
export interface HexPair {
  key: string;
  value: string;
}

/**
 * `ldb --db=DIR scan --hex`: every live key and value of the database, as RocksDB sees it (it
 * replays the WALs in memory; `scan` opens read-only). Throws with the tool's output if it fails
 * or prints anything but `0xKEY : 0xVALUE` lines.
 */
export function ldbScan(dir: string): HexPair[] {
  const r = runTool('ldb', [`--db=${dir}`, 'scan', '--hex']);
  if (r.status !== 0) throw new Error(`ldb scan of ${dir} failed (exit ${r.status}): ${r.stderr}${r.stdout}`.slice(0, 2000));
  const out: HexPair[] = [];
  for (const line of r.stdout.split('\n')) {
    if (line === '') continue;
    const m = /^0x([0-9A-F]*) : 0x([0-9A-F]*)$/.exec(line);
    if (m === null) throw new Error(`ldb scan printed an unexpected line: ${JSON.stringify(line.slice(0, 200))}`);
    out.push({ key: m[1]!.toLowerCase(), value: m[2]!.toLowerCase() });
  }
  return out;
}

/** One entry of `sst_dump --command=scan --output_hex`. */
export interface SstEntry {
  key: string;
  seq: number;
  type: number;
  value: string;
}

/** The lines sst_dump prints around the entries of a table without RocksDB's properties block. */
const SST_DUMP_NOISE = [/^options\.env is /, /^Process /, /^Not able to read table properties$/, /^Sst file format: block-based/, /^from \[\] to \[\]$/];

/**
 * `sst_dump --file=F --command=scan --output_hex` on the table at `path`: every entry (internal
 * key split into user key, sequence and type) in table order. sst_dump only takes files named
 * `*.sst`, so the table is linked as one into `linkDir` first. Throws with the tool's output if it
 * fails, reports an error, or prints a line that is neither an entry nor its usual preamble.
 */
export function sstDumpScan(path: string, linkDir: string): SstEntry[] {
  const link = join(linkDir, basename(path).replace(/\.ldb$/, '.sst'));
  symlinkSync(path, link);
  const r = runTool('sst_dump', [`--file=${link}`, '--command=scan', '--output_hex']);
  const all = `${r.stdout}${r.stderr}`;
  if (r.status !== 0 || /corrupt|error|not a valid/i.test(all)) {
    throw new Error(`sst_dump of ${path} failed (exit ${r.status}): ${all}`.slice(0, 2000));
  }
  const out: SstEntry[] = [];
  for (const line of r.stdout.split('\n')) {
    if (line === '' || SST_DUMP_NOISE.some((re) => re.test(line))) continue;
    const m = /^'([0-9A-F]*)' seq:(\d+), type:(\d+) => ([0-9A-F]*)$/.exec(line);
    if (m === null) throw new Error(`sst_dump printed an unexpected line: ${JSON.stringify(line.slice(0, 200))}`);
    out.push({ key: m[1]!.toLowerCase(), seq: Number(m[2]), type: Number(m[3]), value: m[4]!.toLowerCase() });
  }
  return out;
}
