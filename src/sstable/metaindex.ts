/**
 * The metaindex block: names → block handles of a table's meta blocks (LevelDB's
 * doc/table_format.md "meta blocks"). A bytewise-ordered block of entries
 * `name (bytes) → BlockHandle (varint64 offset ‖ varint64 size)`.
 *
 * Names sievekv writes (persisted: never change):
 *
 *   filter.<policy name>      the per-block filter block (LevelDB's layout, filter-block.ts);
 *                             what LevelDB itself writes and reads.
 *   fullfilter.<policy name>  one filter over every user key of the table (RocksDB's "full
 *                             filter" naming); LevelDB ignores it.
 *   sievekv.properties        the properties block (table-properties.ts); LevelDB ignores it.
 *
 * A table carries at most one filter. Readers ignore names they do not know, including filters
 * whose policy they do not know (the table still reads correctly, without skipping).
 */
import { TextDecoder, TextEncoder } from 'node:util';
import { corruption } from '../errors.js';
import { bytewiseComparator } from '../format/comparator.js';
import { Block } from './block.js';
import { BlockBuilder } from './block-builder.js';
import { BlockHandle } from './footer.js';

/** Persisted: metaindex name prefix of a per-block filter block. Never change. */
export const BLOCK_FILTER_PREFIX = 'filter.' as const;
/** Persisted: metaindex name prefix of a whole-table filter. Never change. */
export const FULL_FILTER_PREFIX = 'fullfilter.' as const;
/** Persisted: metaindex name of the properties block. Never change. */
export const PROPERTIES_BLOCK_NAME = 'sievekv.properties' as const;

/**
 * Where a table's filter lives: `'block'` = one filter per 2 KiB of data-block offsets, asked
 * about the one block a lookup reads (LevelDB's layout, readable by LevelDB); `'table'` = one
 * filter over all the table's user keys, asked before the index is even searched.
 */
export type FilterScope = 'block' | 'table';

/** The metaindex name of a filter of `scope` made by the policy named `policyName`. */
export function filterBlockName(scope: FilterScope, policyName: string): string {
  return (scope === 'table' ? FULL_FILTER_PREFIX : BLOCK_FILTER_PREFIX) + policyName;
}

const encoder = new TextEncoder();
/** Fatal: a name that is not UTF-8 is kept as its latin1 spelling instead (see decode). */
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Encodes the metaindex entries (any order; sorted here) into a finished block. Returns an owned
 * array.
 */
export function encodeMetaindex(entries: ReadonlyMap<string, BlockHandle>): Uint8Array {
  const names = [...entries.keys()].map((name) => ({ name, bytes: encoder.encode(name) }));
  names.sort((a, b) => bytewiseComparator.compare(a.bytes, 0, a.bytes.length, b.bytes, 0, b.bytes.length));
  const builder = new BlockBuilder(1, 256);
  for (const { name, bytes } of names) builder.add(bytes, entries.get(name)!.encode());
  return builder.finish().slice();
}

/**
 * The entries of a metaindex block whose names sievekv knows (the prefixes above; other names,
 * and names that are not UTF-8, are skipped unread). Their handles are decoded (CORRUPTION naming
 * the file and the block's offset if one is malformed); whether they lie inside the file is for
 * the table reader.
 */
export function decodeMetaindex(block: Block): Map<string, BlockHandle> {
  const out = new Map<string, BlockHandle>();
  const it = block.newIterator(bytewiseComparator);
  for (it.seekToFirst(); it.valid(); it.next()) {
    let name: string;
    try {
      name = decoder.decode(it.key());
    } catch {
      continue;
    }
    if (!isKnownName(name)) continue;
    const handle = new BlockHandle();
    const end = handle.decodeFrom(it.data, it.valueStart, it.valueEnd, block.file, block.offset);
    if (end !== it.valueEnd) {
      throw corruption(`metaindex entry "${name}" has ${it.valueEnd - end} bytes after its handle`, {
        file: block.file,
        offset: block.offset,
      });
    }
    out.set(name, handle);
  }
  return out;
}

function isKnownName(name: string): boolean {
  return name.startsWith(BLOCK_FILTER_PREFIX) || name.startsWith(FULL_FILTER_PREFIX) || name === PROPERTIES_BLOCK_NAME;
}
