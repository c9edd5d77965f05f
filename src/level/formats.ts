/**
 * The three formats SieveLevel stores natively, as abstract-level names them: abstract-level
 * transcodes every other encoding (json, hex, base64, custom ones…) to one of these before a
 * private method sees it. Going in, sievekv takes a string (UTF-8) or a Uint8Array as it is;
 * coming out, it hands an owned Buffer, which serves 'buffer' and 'view' (a Buffer is a
 * Uint8Array) and is decoded to a string for 'utf8'.
 */
/** abstract-level's storage formats. */
export type LevelFormat = 'utf8' | 'buffer' | 'view';

/** What sievekv hands back, as the format asks. */
export type Decode = (bytes: Buffer) => string | Buffer;

const asString: Decode = (bytes) => bytes.toString('utf8');
const asBytes: Decode = (bytes) => bytes;

/** The decoder for `format` (anything but 'utf8' is bytes). */
export function decoderFor(format: unknown): Decode {
  return format === 'utf8' ? asString : asBytes;
}
