/**
 * How the CLI shows bytes to people and reads them back from arguments: hex (lower case, no
 * prefix) for machines (`--json`, `--hex`), and for people either the text itself, quoted, when
 * it is printable UTF-8, or `0x` + hex when it is not. The two spellings cannot be confused: text
 * is always in double quotes (JSON string escapes), hex never is.
 */
import { Buffer } from 'node:buffer';
import { TextDecoder } from 'node:util';
import { invalidArgument } from '../errors.js';

const HEX = '0123456789abcdef';
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Lower-case hex of `bytes` ('' for none). */
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    out += HEX[b >>> 4]! + HEX[b & 15]!;
  }
  return out;
}

/** The bytes spelled by `hex` (even length, 0-9a-fA-F); INVALID_ARGUMENT naming `what` otherwise. */
export function fromHex(hex: string, what: string): Uint8Array {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) {
    throw invalidArgument(`${what} is not hex (an even number of 0-9a-f digits): ${JSON.stringify(hex)}`);
  }
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

/**
 * The text of `bytes` if it is UTF-8 without control characters (tab excepted: C0, DEL, C1) and
 * without U+FFFD-style oddities a terminal would hide; otherwise undefined.
 */
export function printableText(bytes: Uint8Array): string | undefined {
  // ASCII fast path: most keys in practice.
  let ascii = true;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b >= 0x80) {
      ascii = false;
      break;
    }
    if ((b < 0x20 && b !== 0x09) || b === 0x7f) return undefined;
  }
  if (ascii) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return undefined;
  }
  // C0/C1 controls, DEL, bidi overrides and the BOM would garble or hide what follows.
  if (/[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/u.test(text)) return undefined;
  return text;
}

/** For people: `"text"` (JSON-quoted) when printable, else `0x` + hex. */
export function showBytes(bytes: Uint8Array): string {
  const text = printableText(bytes);
  return text === undefined ? `0x${toHex(bytes)}` : JSON.stringify(text);
}

/** A byte count for people: exact below 10 KiB, else with one decimal in KiB / MiB / GiB. */
export function formatSize(n: number): string {
  if (n < 10 * 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}
