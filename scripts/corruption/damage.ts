/**
 * Damage for the corruption campaign: what is done to one file of a database image, chosen at
 * random or at the file's own boundaries (log fragment headers; table blocks, trailers and the
 * footer), and described in one line that says exactly what was done (so a failure can be
 * replayed by hand).
 *
 * Kinds: a flipped byte (one bit, or a random mask), a zeroed range, a truncation, appended
 * bytes (garbage or zeros), and a removed file.
 */
import type { SeededRandom } from '../../bench/seeded-keys.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { TableInspector } from '../../src/tools/table-inspector.js';
import { LOG_BLOCK_SIZE, LOG_HEADER_SIZE } from '../../src/wal/log-format.js';
import type { ImageFile } from './image.js';

export type Damage =
  | { kind: 'flip'; offset: number; mask: number }
  | { kind: 'zero'; offset: number; length: number }
  | { kind: 'truncate'; length: number }
  | { kind: 'append'; bytes: Uint8Array }
  | { kind: 'remove' };

export interface DamagePlan {
  file: ImageFile;
  damage: Damage;
  /** How the place was chosen: `random`, or the boundary it was put at. */
  where: string;
}

/** The file's bytes after `damage`, or null if the file is removed. */
export function damaged(bytes: Uint8Array, damage: Damage): Uint8Array | null {
  switch (damage.kind) {
    case 'flip': {
      const out = bytes.slice();
      out[damage.offset]! ^= damage.mask;
      return out;
    }
    case 'zero': {
      const out = bytes.slice();
      out.fill(0, damage.offset, Math.min(bytes.length, damage.offset + damage.length));
      return out;
    }
    case 'truncate':
      return bytes.slice(0, damage.length);
    case 'append': {
      const out = new Uint8Array(bytes.length + damage.bytes.length);
      out.set(bytes);
      out.set(damage.bytes, bytes.length);
      return out;
    }
    case 'remove':
      return null;
  }
}

export function describeDamage(plan: DamagePlan): string {
  const { file, damage, where } = plan;
  const size = file.bytes.length;
  const at = `${file.path} (${file.role}, ${size} bytes)`;
  switch (damage.kind) {
    case 'flip':
      return `flip ${at} byte ${damage.offset} ^= 0x${damage.mask.toString(16)} [${where}]`;
    case 'zero':
      return `zero ${at} bytes [${damage.offset}, ${Math.min(size, damage.offset + damage.length)}) [${where}]`;
    case 'truncate':
      return `truncate ${at} to ${damage.length} bytes (-${size - damage.length}) [${where}]`;
    case 'append':
      return `append ${damage.bytes.length} bytes to ${at}: ${Buffer.from(damage.bytes).toString('hex').slice(0, 80)} [${where}]`;
    case 'remove':
      return `remove ${at}`;
  }
}

/** A named place in a file: where a structure starts, and how long it is. */
export interface Boundary {
  name: string;
  offset: number;
  length: number;
  /** A log fragment's type (1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST). */
  type?: number;
}

/** Fragment headers of a log (WAL or MANIFEST), as written: offset, and header plus payload length. */
export function logBoundaries(bytes: Uint8Array): Boundary[] {
  const out: Boundary[] = [];
  let pos = 0;
  while (pos + LOG_HEADER_SIZE <= bytes.length) {
    const blockLeft = LOG_BLOCK_SIZE - (pos % LOG_BLOCK_SIZE);
    if (blockLeft < LOG_HEADER_SIZE) {
      pos += blockLeft;
      continue;
    }
    const length = bytes[pos + 4]! | (bytes[pos + 5]! << 8);
    const type = bytes[pos + 6]!;
    if (type === 0 && length === 0) break;
    out.push({ name: `fragment@${pos} type ${type} len ${length}`, offset: pos, length: LOG_HEADER_SIZE + length, type });
    pos += LOG_HEADER_SIZE + length;
  }
  return out;
}

/** Blocks of a table (each with its 5-byte trailer) and the footer, from a sound copy. */
export function tableBoundaries(bytes: Uint8Array): Boundary[] {
  const fs = new MemFileSystem();
  const file = fs.createWritable('/t.ldb');
  file.append(bytes);
  file.close();
  const inspector = TableInspector.open(fs, '/t.ldb');
  try {
    const insp = inspector.inspect();
    const out: Boundary[] = insp.blocks.map((b) => ({ name: `${b.kind}${b.name ? ` ${b.name}` : ''} block@${b.offset}`, offset: b.offset, length: b.size + 5 }));
    out.push({ name: 'footer', offset: bytes.length - 48, length: 48 });
    return out;
  } finally {
    inspector.close();
  }
}

export function boundariesOf(file: ImageFile): Boundary[] {
  switch (file.role) {
    case 'wal':
    case 'manifest':
      return logBoundaries(file.bytes);
    case 'table':
      return tableBoundaries(file.bytes);
    default:
      return [{ name: 'whole file', offset: 0, length: file.bytes.length }];
  }
}

/** Picks damage for `file` (whose boundaries are `boundaries`) from `random`; never a removal. */
export function pickDamage(file: ImageFile, boundaries: readonly Boundary[], random: SeededRandom): DamagePlan {
  const next = (): number => random.nextUint32() / 2 ** 32;
  const int = (n: number): number => Math.floor(next() * n);
  const size = file.bytes.length;
  const mask = (): number => (next() < 0.6 ? 1 << int(8) : 1 + int(255));
  const atBoundary = boundaries.length > 0 && next() < 0.5;
  const b = atBoundary ? boundaries[int(boundaries.length)]! : undefined;
  const r = next();
  if (b === undefined) {
    if (r < 0.4) return { file, damage: { kind: 'flip', offset: int(size), mask: mask() }, where: 'random' };
    if (r < 0.6) {
      const offset = int(size);
      const length = 1 + (next() < 0.5 ? int(16) : int(4096));
      return { file, damage: { kind: 'zero', offset, length }, where: 'random' };
    }
    if (r < 0.8) return { file, damage: { kind: 'truncate', length: int(size) }, where: 'random' };
    {
      const bytes = new Uint8Array(1 + (next() < 0.5 ? int(16) : int(300)));
      if (next() < 0.7) random.fill(bytes);
      return { file, damage: { kind: 'append', bytes }, where: `random ${bytes.some((x) => x !== 0) ? 'garbage' : 'zeros'}` };
    }
  }
  // At a boundary: the structure's first bytes (a log header's checksum, length and type; a
  // block's first entry), its last bytes (a table block's trailer), the whole of it, or a cut.
  const where = b.name;
  if (r < 0.45) {
    const pick = next();
    const offset = pick < 0.5 ? b.offset + int(Math.min(b.length, 8)) : pick < 0.8 ? b.offset + b.length - 1 - int(Math.min(b.length, 5)) : b.offset + int(b.length);
    return { file, damage: { kind: 'flip', offset: Math.min(size - 1, Math.max(0, offset)), mask: mask() }, where };
  }
  if (r < 0.7) {
    const pick = next();
    // Its header; the whole structure; from it to the end of the file (a zeroed suffix).
    const length = pick < 0.35 ? Math.min(b.length, 7) : pick < 0.7 ? b.length : size - b.offset;
    return { file, damage: { kind: 'zero', offset: b.offset, length }, where: `${where}${pick >= 0.7 ? ' to the end' : ''}` };
  }
  if (r < 0.92) {
    // Cut at its start, inside its header, or just before its end.
    const pick = next();
    const length = pick < 0.4 ? b.offset : pick < 0.7 ? b.offset + 1 + int(Math.min(6, b.length)) : b.offset + b.length - 1;
    return { file, damage: { kind: 'truncate', length: Math.max(0, Math.min(size, length)) }, where };
  }
  // A copy of the structure appended after the end: for a log, a record that verifies.
  return { file, damage: { kind: 'append', bytes: file.bytes.slice(b.offset, b.offset + b.length) }, where: `copy of ${where}` };
}
