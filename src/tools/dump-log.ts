/**
 * `sievekv dump NNNNNN.log`: every write batch of a WAL — its record's file offset, sequence
 * number and count, then its entries — and every stretch of the log that was dropped for damage
 * (offset, bytes, reason), in file order. Records are read with the database's own LogReader, so
 * the tool sees exactly what recovery would replay; a record that passes its checksum but is not
 * a well-formed batch is reported as damage too. A torn tail (a record cut short by the end of
 * the file) is not damage: the writer died before acknowledging it, and recovery ignores it.
 *
 * Exit code 1 when anything was damaged (with or without `--verify`), 0 otherwise.
 *
 * JSON Lines (stable):
 *   {"kind":"batch","offset":<n>,"sequence":<n>,"count":<n>}
 *   {"kind":"entry","key":"<hex>","seq":<n>,"type":"value"|"deletion","value":"<hex>"}
 *   {"kind":"damage","offset":<n>,"bytes":<n>,"reason":"…"}
 *   {"kind":"verify","ok":<bool>,"batches":<n>,"entries":<n>,"damage":<count>}  with --verify,
 *     after a "damage" line per damaged stretch (every line stays short)
 */
import type { FileSystem, RandomAccessFile } from '../fs/file-system.js';
import { ValueType } from '../format/internal-key.js';
import { type LogCorruption, LogReader } from '../wal/log-reader.js';
import { batchSequence, checkBatch, forEachBatchEntry } from '../wal/write-batch.js';
import { bareMessage } from './error-text.js';
import { showBytes, toHex } from './format-bytes.js';
import type { LineWriter } from './output.js';
import type { DumpFlags } from './dump-table.js';

/**
 * Reads every record of the log `file`: `onRecord(record, offset)` for each (the view is valid
 * during the call), `onDamage` for each dropped stretch, in file order. A record `onRecord`
 * rejects by returning a reason is reported to `onDamage` as damage of the whole record.
 */
export function forEachLogRecord(
  file: RandomAccessFile,
  onRecord: (record: Uint8Array, offset: number) => string | undefined,
  onDamage: (damage: LogCorruption) => void,
): void {
  const reader = new LogReader(file, { onCorruption: onDamage });
  for (let rec = reader.readRecord(); rec !== null; rec = reader.readRecord()) {
    const offset = reader.lastRecordOffset;
    const rejected = onRecord(rec, offset);
    if (rejected !== undefined) onDamage({ offset, bytes: rec.length, kind: 'content', reason: rejected, fragmentsBefore: reader.fragmentsVerified });
  }
}

export function describeDamage(d: LogCorruption): string {
  return `damage at offset ${d.offset}: ${d.bytes} bytes dropped (${d.reason})`;
}

/** Reports the first damage and how much more there is to stderr. */
export function reportDamage(damage: readonly LogCorruption[], shown: string, err: (line: string) => void): void {
  const d = damage[0];
  if (d === undefined) return;
  err(`${shown}: ${describeDamage(d)}`);
  if (damage.length > 1) err(`${shown}: ${damage.length - 1} more damaged stretch${damage.length > 2 ? 'es' : ''}`);
}

/** Dumps the WAL at `path` (shown as `shown`); returns the exit code. */
export function dumpLog(fs: FileSystem, path: string, shown: string, flags: DumpFlags, out: LineWriter, err: (line: string) => void): number {
  const file = fs.openReadable(path);
  const listing = !flags.verify && !flags.stats;
  const damage: LogCorruption[] = [];
  let batches = 0;
  let entries = 0;
  let deletions = 0;
  let bytes = 0;
  let firstSeq: number | undefined;
  let lastSeq: number | undefined;
  try {
    forEachLogRecord(
      file,
      (rec, offset) => {
        let count: number;
        try {
          count = checkBatch(rec, path, offset);
        } catch (e) {
          return `not a write batch: ${bareMessage(e)}`;
        }
        const sequence = batchSequence(rec);
        batches++;
        entries += count;
        bytes += rec.length;
        firstSeq ??= sequence;
        if (count > 0) lastSeq = Math.max(lastSeq ?? 0, sequence + count - 1);
        if (listing) {
          if (flags.json) out.line(`{"kind":"batch","offset":${offset},"sequence":${sequence},"count":${count}}`);
          else out.line(`--- offset ${offset}; sequence ${sequence}; count ${count}`);
        }
        let seq = sequence;
        forEachBatchEntry(
          rec,
          (type, key, value) => {
            const deletion = type === ValueType.DELETION;
            if (deletion) deletions++;
            if (listing) {
              if (flags.json) {
                out.line(
                  `{"kind":"entry","key":"${toHex(key)}","seq":${seq},"type":"${deletion ? 'deletion' : 'value'}","value":"${deletion ? '' : toHex(value)}"}`,
                );
              } else {
                out.line(deletion ? `  del ${showBytes(key)}` : `  put ${showBytes(key)} => ${showBytes(value)}`);
              }
            }
            seq++;
          },
          path,
          offset,
        );
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
  const seqRange = firstSeq === undefined ? 'none' : `${firstSeq}..${lastSeq ?? firstSeq}`;
  if (flags.verify) {
    if (flags.json) {
      for (const d of damage) out.json({ kind: 'damage', offset: d.offset, bytes: d.bytes, reason: d.reason });
      out.json({ kind: 'verify', ok: damage.length === 0, file: shown, batches, entries, damage: damage.length });
    }
    else if (damage.length === 0) out.line(`OK ${shown}: ${batches} batches, ${entries} entries, sequences ${seqRange}`);
  }
  if (flags.stats) {
    const s = { kind: 'stats', fileSize: file.size, batches, entries, deletions, batchBytes: bytes, damagedStretches: damage.length, damagedBytes: damage.reduce((n, d) => n + d.bytes, 0), firstSequence: firstSeq ?? null, lastSequence: lastSeq ?? null };
    if (flags.json) out.json(s);
    else {
      out.line(`file size         ${s.fileSize}`);
      out.line(`batches           ${batches} (${bytes} bytes of batch records)`);
      out.line(`entries           ${entries} (${deletions} deletions)`);
      out.line(`sequences         ${seqRange}`);
      out.line(`damage            ${damage.length} stretches, ${s.damagedBytes} bytes`);
    }
  }
  if (damage.length > 0) {
    reportDamage(damage, shown, err);
    return 1;
  }
  return 0;
}
