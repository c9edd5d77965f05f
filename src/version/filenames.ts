/**
 * The names of a database's files, as LevelDB names them (db/filename.cc), so that LevelDB and
 * sievekv find each other's files: NNNNNN.log (WAL), NNNNNN.ldb (table; NNNNNN.sst also read),
 * MANIFEST-NNNNNN, CURRENT, LOCK, LOG / LOG.old (info log), NNNNNN.dbtmp (temporary).
 */
import { join } from 'node:path';

export const FileType = {
  LOG: 'log',
  TABLE: 'table',
  DESCRIPTOR: 'descriptor',
  CURRENT: 'current',
  LOCK: 'lock',
  INFO_LOG: 'info-log',
  TEMP: 'temp',
} as const;
export type FileType = (typeof FileType)[keyof typeof FileType];

const pad = (n: number): string => String(n).padStart(6, '0');

export const logFileName = (dir: string, n: number): string => join(dir, `${pad(n)}.log`);
export const tableFileName = (dir: string, n: number): string => join(dir, `${pad(n)}.ldb`);
/** LevelDB before 1.14 named tables .sst; still read. */
export const sstTableFileName = (dir: string, n: number): string => join(dir, `${pad(n)}.sst`);
export const descriptorFileName = (dir: string, n: number): string => join(dir, `MANIFEST-${pad(n)}`);
export const currentFileName = (dir: string): string => join(dir, 'CURRENT');
export const lockFileName = (dir: string): string => join(dir, 'LOCK');
export const tempFileName = (dir: string, n: number): string => join(dir, `${pad(n)}.dbtmp`);
export const infoLogFileName = (dir: string): string => join(dir, 'LOG');
export const oldInfoLogFileName = (dir: string): string => join(dir, 'LOG.old');

/** The type and number of a file name (not a path), or undefined for a name that is not ours. */
export function parseFileName(name: string): { type: FileType; number: number } | undefined {
  if (name === 'CURRENT') return { type: FileType.CURRENT, number: 0 };
  if (name === 'LOCK') return { type: FileType.LOCK, number: 0 };
  if (name === 'LOG' || name === 'LOG.old') return { type: FileType.INFO_LOG, number: 0 };
  let m = /^MANIFEST-(\d+)$/.exec(name);
  if (m) return { type: FileType.DESCRIPTOR, number: Number(m[1]) };
  m = /^(\d+)\.(log|ldb|sst|dbtmp)$/.exec(name);
  if (!m) return undefined;
  const number = Number(m[1]);
  if (!Number.isSafeInteger(number)) return undefined;
  const ext = m[2];
  const type = ext === 'log' ? FileType.LOG : ext === 'dbtmp' ? FileType.TEMP : FileType.TABLE;
  return { type, number };
}
