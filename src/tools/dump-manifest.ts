/**
 * `sievekv dump MANIFEST-NNNNNN`: every VersionEdit of a MANIFEST (comparator, log numbers, next
 * file number, last sequence, compact pointers, deleted and new files with their key ranges), in
 * file order with its record offset, then the set of live files the edits add up to. Damaged
 * stretches and records that are not VersionEdits are reported as in dump-log.ts (exit code 1).
 *
 * JSON Lines (stable), every line short — an edit that lists many files (the first of a MANIFEST
 * lists them all) gets a line per file:
 *   {"kind":"edit","offset":<n>, comparator?, logNumber?, prevLogNumber?, nextFileNumber?,
 *    lastSequence?, "compactPointers":<count>, "deletedFiles":<count>, "newFiles":<count>}
 *     then, with the same offset, one line per item of the edit:
 *   {"kind":"compact-pointer","offset","region","level","key"}
 *   {"kind":"deleted-file","offset","region","level","number"}
 *   {"kind":"new-file","offset","region","level","number","size","smallest","largest"}
 *   {"kind":"damage","offset","bytes","reason"}
 *   {"kind":"version","edits", logNumber?, prevLogNumber?, nextFileNumber?, lastSequence?, "liveFiles":<count>}
 *     then {"kind":"live-file","region","level","number","size"} per live file
 * (fields absent from a record are absent from its line; keys are {key: hex, seq, type}, with
 * sequences as numbers, or strings past 2^53).
 */
import type { FileSystem } from '../fs/file-system.js';
import { INTERNAL_KEY_TRAILER_SIZE, readSequenceBigInt, ValueType } from '../format/internal-key.js';
import type { LogCorruption } from '../wal/log-reader.js';
import { VersionEdit } from '../version/version-edit.js';
import { bareMessage } from './error-text.js';
import { toHex } from './format-bytes.js';
import type { LineWriter } from './output.js';
import type { DumpFlags } from './dump-table.js';
import { describeDamage, forEachLogRecord, reportDamage } from './dump-log.js';
import { describeKey } from './table-inspector.js';

interface KeyJson {
  key: string;
  seq: number | string;
  type: 'value' | 'deletion' | number;
}

/** An internal key for JSON (a malformed one, shorter than a trailer, as its hex). */
function keyJson(k: Uint8Array): KeyJson | string {
  if (k.length < INTERNAL_KEY_TRAILER_SIZE) return toHex(k);
  const userEnd = k.length - INTERNAL_KEY_TRAILER_SIZE;
  const seq = readSequenceBigInt(k, k.length);
  const t = k[userEnd]!;
  return {
    key: toHex(k.subarray(0, userEnd)),
    seq: seq <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(seq) : seq.toString(),
    type: t === ValueType.VALUE ? 'value' : t === ValueType.DELETION ? 'deletion' : t,
  };
}

/** An edit as JSON Lines: its own line, then one per compact pointer, deleted file and new file. */
export function editJsonLines(edit: VersionEdit, offset: number): Record<string, unknown>[] {
  return [
    {
      kind: 'edit',
      offset,
      comparator: edit.comparator,
      logNumber: edit.logNumber,
      prevLogNumber: edit.prevLogNumber,
      nextFileNumber: edit.nextFileNumber,
      lastSequence: edit.lastSequence,
      compactPointers: edit.compactPointers.length,
      deletedFiles: edit.deletedFiles.length,
      newFiles: edit.newFiles.length,
    },
    ...edit.compactPointers.map((c) => ({ kind: 'compact-pointer', offset, region: c.region, level: c.level, key: keyJson(c.key) })),
    ...edit.deletedFiles.map((d) => ({ kind: 'deleted-file', offset, region: d.region, level: d.level, number: d.number })),
    ...edit.newFiles.map((f) => ({
      kind: 'new-file',
      offset,
      region: f.region,
      level: f.level,
      number: f.file.number,
      size: f.file.fileSize,
      smallest: keyJson(f.file.smallest),
      largest: keyJson(f.file.largest),
    })),
  ];
}

function regionText(region: number): string {
  return region === 0 ? '' : ` region ${region}`;
}

function writeEditText(edit: VersionEdit, offset: number, out: LineWriter): void {
  out.line(`--- offset ${offset}`);
  if (edit.comparator !== undefined) out.line(`  comparator: ${edit.comparator}`);
  if (edit.logNumber !== undefined) out.line(`  log number: ${edit.logNumber}`);
  if (edit.prevLogNumber !== undefined) out.line(`  prev log number: ${edit.prevLogNumber}`);
  if (edit.nextFileNumber !== undefined) out.line(`  next file: ${edit.nextFileNumber}`);
  if (edit.lastSequence !== undefined) out.line(`  last sequence: ${edit.lastSequence}`);
  for (const c of edit.compactPointers) out.line(`  compact pointer:${regionText(c.region)} level ${c.level} ${describeKey(c.key)}`);
  for (const d of edit.deletedFiles) out.line(`  deleted file:${regionText(d.region)} level ${d.level} #${d.number}`);
  for (const f of edit.newFiles) {
    out.line(
      `  new file:${regionText(f.region)} level ${f.level} #${f.file.number} (${f.file.fileSize} bytes) ` +
        `${describeKey(f.file.smallest)} .. ${describeKey(f.file.largest)}`,
    );
  }
}

interface LiveFile {
  region: number;
  level: number;
  number: number;
  size: number;
}

/** Dumps the MANIFEST at `path` (shown as `shown`); returns the exit code. */
export function dumpManifest(
  fs: FileSystem,
  path: string,
  shown: string,
  flags: DumpFlags,
  out: LineWriter,
  err: (line: string) => void,
): number {
  const file = fs.openReadable(path);
  const listing = !flags.verify && !flags.stats;
  const damage: LogCorruption[] = [];
  /** Live files by `region/level/number`, in the order they were added. */
  const live = new Map<string, LiveFile>();
  const state: { logNumber?: number; prevLogNumber?: number; nextFileNumber?: number; lastSequence?: number; comparator?: string } = {};
  let edits = 0;
  try {
    forEachLogRecord(
      file,
      (rec, offset) => {
        let edit: VersionEdit;
        try {
          edit = VersionEdit.decode(rec, path, offset);
        } catch (e) {
          return `not a VersionEdit: ${bareMessage(e)}`;
        }
        edits++;
        if (edit.comparator !== undefined) state.comparator = edit.comparator;
        if (edit.logNumber !== undefined) state.logNumber = edit.logNumber;
        if (edit.prevLogNumber !== undefined) state.prevLogNumber = edit.prevLogNumber;
        if (edit.nextFileNumber !== undefined) state.nextFileNumber = edit.nextFileNumber;
        if (edit.lastSequence !== undefined) state.lastSequence = edit.lastSequence;
        // As VersionBuilder applies an edit: deletions first, then additions.
        for (const d of edit.deletedFiles) live.delete(`${d.region}/${d.level}/${d.number}`);
        for (const f of edit.newFiles) {
          live.set(`${f.region}/${f.level}/${f.file.number}`, { region: f.region, level: f.level, number: f.file.number, size: f.file.fileSize });
        }
        if (listing) {
          if (flags.json) for (const line of editJsonLines(edit, offset)) out.json(line);
          else writeEditText(edit, offset, out);
        }
        return undefined;
      },
      (d) => {
        damage.push(d);
        if (listing) {
          if (flags.json) out.json({ kind: 'damage', offset: d.offset, bytes: d.bytes, reason: d.reason });
          else out.line(describeDamage(d));
        }
      },
    );
  } finally {
    file.close();
  }
  const files = [...live.values()].sort((a, b) => a.region - b.region || a.level - b.level || a.number - b.number);
  if (listing || flags.stats) {
    if (flags.json) {
      out.json({ kind: 'version', edits, ...state, liveFiles: files.length });
      for (const f of files) out.json({ kind: 'live-file', ...f });
    } else {
      out.line(`version after ${edits} edit${edits === 1 ? '' : 's'}:`);
      if (state.comparator !== undefined) out.line(`  comparator: ${state.comparator}`);
      out.line(`  log number: ${state.logNumber ?? '-'}; next file: ${state.nextFileNumber ?? '-'}; last sequence: ${state.lastSequence ?? '-'}`);
      if (files.length === 0) out.line('  no live files');
      for (const f of files) out.line(`  level ${f.level}${regionText(f.region)}: #${f.number} (${f.size} bytes)`);
    }
  }
  if (flags.verify) {
    if (flags.json) {
      for (const d of damage) out.json({ kind: 'damage', offset: d.offset, bytes: d.bytes, reason: d.reason });
      out.json({ kind: 'verify', ok: damage.length === 0, file: shown, edits, liveFiles: files.length, damage: damage.length });
    }
    else if (damage.length === 0) out.line(`OK ${shown}: ${edits} edits, ${files.length} live files`);
  }
  if (damage.length > 0) {
    reportDamage(damage, shown, err);
    return 1;
  }
  return 0;
}
