/**
 * `sievekv dump` on write-ahead logs and MANIFESTs, in-process: LevelDB-made fixture logs
 * (re-applying the dumped batches gives the fixture's expected.jsonl), damaged copies (damage
 * reported by offset, exit 1, the rest still listed), and MANIFESTs (the files their edits leave
 * live are exactly the tables in the directory).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fixturePath, readJsonLines } from '../support/fixtures.js';
import { flipped, jsonLines, type JsonLine, memFsWith, runCli } from './cli-support.js';

interface BatchLine {
  kind: 'batch';
  offset: number;
  sequence: number;
  count: number;
}
interface EntryLine {
  kind: 'entry';
  key: string;
  seq: number;
  type: 'value' | 'deletion';
  value: string;
}

/** Applies the dumped batches in order, checking the batch/entry structure on the way. */
function reapply(lines: JsonLine[]): Map<string, string> {
  const state = new Map<string, string>();
  let batch: BatchLine | undefined;
  let seen = 0;
  let lastSeq = 0;
  for (const l of lines) {
    if (l.kind === 'batch') {
      if (batch !== undefined) expect(seen).toBe(batch.count);
      batch = l as unknown as BatchLine;
      expect(batch.sequence).toBeGreaterThan(lastSeq);
      seen = 0;
    } else if (l.kind === 'entry') {
      const e = l as unknown as EntryLine;
      expect(e.seq).toBe(batch!.sequence + seen);
      lastSeq = e.seq;
      seen++;
      if (e.type === 'value') state.set(e.key, e.value);
      else {
        expect(e.value).toBe('');
        state.delete(e.key);
      }
    }
  }
  if (batch !== undefined) expect(seen).toBe(batch.count);
  return state;
}

const sorted = (m: Map<string, string>): [string, string][] =>
  [...m].sort(([a], [b]) => Buffer.compare(Buffer.from(a, 'hex'), Buffer.from(b, 'hex')));

describe('dump of write-ahead logs', () => {
  it('ldb-log-edges/000003.log: the batches re-applied are expected.jsonl; deleted keys are gone', async () => {
    const path = fixturePath('ldb-log-edges', '000003.log');
    const r = await runCli(['dump', '--json', path]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = jsonLines(r.stdout);
    expect(lines.every((l) => l.kind === 'batch' || l.kind === 'entry')).toBe(true);
    for (const l of lines.filter((x) => x.kind === 'batch')) expect(Object.keys(l)).toEqual(['kind', 'offset', 'sequence', 'count']);
    for (const l of lines.filter((x) => x.kind === 'entry')) expect(Object.keys(l)).toEqual(['kind', 'key', 'seq', 'type', 'value']);
    const state = reapply(lines);
    const expected = readJsonLines<{ key: string; value: string }>('ldb-log-edges', 'expected.jsonl');
    expect(sorted(state)).toEqual(expected.map((e) => [e.key, e.value]));
    for (const d of readJsonLines<{ key: string }>('ldb-log-edges', 'deleted.jsonl')) expect(state.has(d.key)).toBe(false);
    // Record offsets are where the records start: the first at 0, all inside the file, increasing.
    const offsets = lines.filter((l) => l.kind === 'batch').map((l) => l.offset as number);
    expect(offsets[0]).toBe(0);
    for (let i = 1; i < offsets.length; i++) expect(offsets[i]).toBeGreaterThan(offsets[i - 1]!);
    expect(offsets.at(-1)).toBeLessThan(readFileSync(path).length);
  });

  it('text dump: a header per batch, then put/del lines', async () => {
    const r = await runCli(['dump', fixturePath('ldb-log-edges', '000003.log')]);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^--- offset 0; sequence 1; count 1$/);
    expect(lines).toContain('  del "edge/b-leave7"');
    expect(lines).toContain('  put 0x00 => 0xff');
    expect(lines.every((l) => /^(--- offset \d+; sequence \d+; count \d+|  put .+ => .*|  del .+)$/.test(l))).toBe(true);
  });

  it('an empty WAL or MANIFEST says so, in text and in JSON (exit 0)', async () => {
    const empty = fixturePath('ldb-small-nocomp', '000010.log');
    expect(readFileSync(empty).length).toBe(0);
    expect(await runCli(['dump', empty])).toEqual({ code: 0, stdout: `${empty}: empty write-ahead log (0 bytes): no batches\n`, stderr: '' });
    const j = await runCli(['dump', '--json', empty]);
    expect(jsonLines(j.stdout)).toEqual([{ kind: 'empty', file: empty, fileKind: 'log', fileSize: 0 }]);
    const fs = memFsWith({ '/m/MANIFEST-000004': new Uint8Array(0) });
    expect((await runCli(['dump', '/m/MANIFEST-000004'], fs)).stdout).toBe('/m/MANIFEST-000004: empty MANIFEST (0 bytes): no edits\n');
  });

  it('--verify: OK on every fixture log, an empty one included', async () => {
    for (const p of [['ldb-log-edges', '000003.log'], ['ldb-snappy-small', '000028.log'], ['ldb-small-nocomp', '000010.log']] as const) {
      const r = await runCli(['dump', '--verify', fixturePath(...p)]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^OK .*: \d+ batches, \d+ entries, sequences (\d+\.\.\d+|none)\n$/);
    }
  });

  it('a damaged record: reported with its offset and bytes, exit 1; the batches around it still listed', async () => {
    const path = fixturePath('ldb-log-edges', '000003.log');
    const original = new Uint8Array(readFileSync(path));
    const clean = jsonLines((await runCli(['dump', '--json', path])).stdout).filter((l) => l.kind === 'batch');
    const victim = clean[1]!.offset as number; // the record at the start of the second block
    const fs = memFsWith({ '/w/000003.log': flipped(original, victim + 20) });
    const r = await runCli(['dump', '--json', '/w/000003.log'], fs);
    expect(r.code).toBe(1);
    const lines = jsonLines(r.stdout);
    const damage = lines.filter((l) => l.kind === 'damage');
    expect(damage.length).toBeGreaterThan(0);
    expect(damage[0]!.offset).toBe(victim);
    expect(damage[0]!.reason).toBe('checksum mismatch');
    expect(damage[0]!.bytes).toBeGreaterThan(0);
    const batches = lines.filter((l) => l.kind === 'batch').map((l) => l.offset);
    expect(batches).toContain(clean[0]!.offset);
    expect(batches).not.toContain(victim);
    expect(batches).toContain(clean.at(-1)!.offset);
    expect(r.stderr.split('\n')[0]).toBe(`sievekv: /w/000003.log: damage at offset ${victim}: ${damage[0]!.bytes as number} bytes dropped (checksum mismatch)`);
    const v = await runCli(['dump', '--verify', '/w/000003.log'], fs);
    expect(v.code).toBe(1);
    expect(v.stdout).toBe('');
    expect(v.stderr.split('\n')[0]).toBe(r.stderr.split('\n')[0]);
  });

  it('a record whose checksum holds but which is not a write batch is damage too', async () => {
    // A log of one FULL record holding 5 bytes (a batch needs a 12-byte header).
    const { LogWriter } = await import('../../src/wal/log-writer.js');
    const fs = memFsWith({});
    fs.mkdir('/w');
    const file = fs.createWritable('/w/000009.log');
    new LogWriter(file).addRecord(new Uint8Array([1, 2, 3, 4, 5]));
    file.close();
    const r = await runCli(['dump', '--verify', '--json', '/w/000009.log'], fs);
    expect(r.code).toBe(1);
    const [d, v, more] = jsonLines(r.stdout);
    expect(d).toEqual({ kind: 'damage', offset: 0, bytes: 5, reason: 'not a write batch: write batch too small' });
    expect(v).toMatchObject({ kind: 'verify', ok: false, damage: 1 });
    expect(more).toBeUndefined();
  });
});

interface EditLine {
  kind: 'edit';
  offset: number;
  comparator?: string;
  deletedFiles: { region: number; level: number; number: number }[];
  newFiles: { region: number; level: number; number: number; size: number; smallest: { key: string; seq: number }; largest: { key: string; seq: number } }[];
}

/**
 * The edits of a MANIFEST's JSON Lines, each with the items that follow its line gathered back
 * (a line per new file, deleted file and compact pointer, the counts on the edit's line).
 */
function editsOf(lines: JsonLine[]): EditLine[] {
  const edits: EditLine[] = [];
  const counts: Record<string, number>[] = [];
  for (const l of lines) {
    if (l.kind === 'edit') {
      edits.push({ ...(l as unknown as EditLine), deletedFiles: [], newFiles: [] });
      counts.push({ deleted: l.deletedFiles as number, added: l.newFiles as number });
    } else if (l.kind === 'new-file' || l.kind === 'deleted-file') {
      const e = edits.at(-1)!;
      expect(l.offset).toBe(e.offset);
      if (l.kind === 'new-file') e.newFiles.push(l as unknown as EditLine['newFiles'][number]);
      else e.deletedFiles.push(l as unknown as EditLine['deletedFiles'][number]);
    }
  }
  edits.forEach((e, i) => expect([e.deletedFiles.length, e.newFiles.length]).toEqual([counts[i]!.deleted, counts[i]!.added]));
  return edits;
}

describe('dump of MANIFESTs', () => {
  for (const [dir, manifest] of [
    ['ldb-small-nocomp', 'MANIFEST-000007'],
    ['ldb-snappy-small', 'MANIFEST-000026'],
    ['ldb-log-edges', 'MANIFEST-000002'],
  ] as const) {
    it(`${dir}: the files the edits leave live are the tables in the directory, sizes included`, async () => {
      const r = await runCli(['dump', '--json', fixturePath(dir, manifest)]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const lines = jsonLines(r.stdout);
      const edits = editsOf(lines);
      for (const l of lines) expect(JSON.stringify(l).length).toBeLessThan(400);
      expect(edits.length).toBeGreaterThan(0);
      expect(edits[0]!.comparator).toBe('leveldb.BytewiseComparator');
      const live = new Map<number, number>();
      for (const e of edits) {
        for (const d of e.deletedFiles) live.delete(d.number);
        for (const f of e.newFiles) {
          live.set(f.number, f.size);
          expect(Buffer.compare(Buffer.from(f.smallest.key, 'hex'), Buffer.from(f.largest.key, 'hex'))).toBeLessThanOrEqual(0);
        }
      }
      const tables = readdirSync(fixturePath(dir)).filter((n) => n.endsWith('.ldb'));
      expect([...live.keys()].sort((a, b) => a - b)).toEqual(tables.map((n) => Number.parseInt(n, 10)).sort((a, b) => a - b));
      for (const n of tables) expect(live.get(Number.parseInt(n, 10))).toBe(readFileSync(fixturePath(dir, n)).length);
      const at = lines.findIndex((l) => l.kind === 'version');
      const version = lines[at]!;
      const files = lines.slice(at + 1);
      expect(files.every((l) => l.kind === 'live-file')).toBe(true);
      expect(version.liveFiles).toBe(files.length);
      expect(files.map((f) => f.number as number).sort((a, b) => a - b)).toEqual([...live.keys()].sort((a, b) => a - b));
      const v = await runCli(['dump', '--verify', fixturePath(dir, manifest)]);
      expect(v.code).toBe(0);
      expect(v.stdout).toBe(`OK ${fixturePath(dir, manifest)}: ${edits.length} edits, ${live.size} live files\n`);
    });
  }

  it('text dump names every field of an edit and the live files', async () => {
    const r = await runCli(['dump', fixturePath('ldb-snappy-small', 'MANIFEST-000026')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^--- offset 0\n {2}comparator: leveldb\.BytewiseComparator\n/);
    expect(r.stdout).toMatch(/^ {2}new file: level 2 #12 \(377522 bytes\) 0x[0-9a-f]+ @ \d+ : value \.\. 0x[0-9a-f]+ @ \d+ : value$/m);
    expect(r.stdout).toMatch(/^ {2}last sequence: \d+$/m);
    expect(r.stdout).toMatch(/^version after 2 edits:\n(.*\n)* {2}level 2: #12 \(377522 bytes\)\n$/m);
  });

  it('CURRENT: names the MANIFEST and dumps it', async () => {
    const r = await runCli(['dump', '--json', fixturePath('ldb-small-nocomp', 'CURRENT')]);
    expect(r.code).toBe(0);
    const lines = jsonLines(r.stdout);
    expect(lines[0]).toEqual({ kind: 'current', manifest: 'MANIFEST-000007' });
    expect(lines.slice(1)).toEqual(jsonLines((await runCli(['dump', '--json', fixturePath('ldb-small-nocomp', 'MANIFEST-000007')])).stdout));
  });

  it('a damaged MANIFEST record is reported by offset with exit 1', async () => {
    const path = fixturePath('ldb-small-nocomp', 'MANIFEST-000007');
    const bytes = new Uint8Array(readFileSync(path));
    const r = await runCli(['dump', '--verify', '/m/MANIFEST-000007'], memFsWith({ '/m/MANIFEST-000007': flipped(bytes, 10) }));
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')[0]).toMatch(/^sievekv: \/m\/MANIFEST-000007: damage at offset 0: \d+ bytes dropped \(checksum mismatch\)$/);
  });

  it('a file whose name says nothing is sniffed (a table by its magic) or refused with one line', async () => {
    const fs = memFsWith({ '/x/copy.bin': fixturePath('ldb-small-nocomp', '000012.ldb'), '/x/notes.txt': new TextEncoder().encode('hello') });
    const t = await runCli(['dump', '--verify', '/x/copy.bin'], fs);
    expect(t.code).toBe(0);
    expect(t.stdout).toMatch(/^OK \/x\/copy\.bin: /);
    const n = await runCli(['dump', '/x/notes.txt'], fs);
    expect(n.code).toBe(1);
    expect(n.stderr).toBe('sievekv: /x/notes.txt: cannot tell what kind of file this is (not a table; give --kind table|log|manifest)\n');
    const forced = await runCli(['dump', '--kind', 'manifest', '--verify', '/x/m'], memFsWith({ '/x/m': fixturePath('ldb-small-nocomp', 'MANIFEST-000007') }));
    expect(forced.code).toBe(0);
  });
});
