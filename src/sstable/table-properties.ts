/**
 * The properties block (metaindex `sievekv.properties`), after RocksDB's properties block: a
 * block (block-builder.ts format, restart interval 1) of entries `name → value`, sorted bytewise
 * by name, stored uncompressed with its trailer. LevelDB ignores it.
 *
 * Values (persisted: never change a name's encoding; add new names instead):
 *
 *   sievekv.num.entries, .num.deletions, .num.user.keys (distinct),
 *   .raw.key.size, .raw.value.size (bytes as added, internal keys incl. trailers),
 *   .data.size, .index.size, .filter.size (bytes in the file: blocks as stored plus their 5-byte
 *   trailers; data.size is where the data blocks end), .num.data.blocks,
 *   .smallest.seq, .largest.seq                      varint64
 *   .filter.policy (policy name, '' for none), .filter.scope ('block' | 'table' | ''),
 *   .compression (the builder's option: 'none' | 'snappy' | 'lz4')   UTF-8 text
 *   sievekv.keysketch2                               a serialized HyperLogLog (hyperloglog.ts) of
 *                                                    the table's user keys (key-sketch.ts)
 *   .key.sketch                                      the same over MurmurHash3, written before
 *                                                    keysketch2 (read, never written)
 *
 * Readers ignore names they do not know and fill absent ones with 0 / '' / undefined, so a
 * newer writer's extra properties and an older writer's missing ones both read.
 *
 * The key sketch: HyperLogLog at precision 12 (4,096 one-byte registers, ≈ 4 KiB per table,
 * standard error 1.04/√4096 ≈ 1.6%). The database merges the sketches of many tables (register-wise
 * max) to estimate distinct user keys across files, e.g. to see how much a compaction would
 * shrink. Precision 14 (0.8%, 16 KiB) would cost a 2 MiB table 0.8% of its size for an estimate
 * that only steers heuristics; 12 keeps the cost ≈ 0.2%, and small tables are counted almost
 * exactly by HyperLogLog's linear-counting range anyway. Sketches merge only at equal precision
 * and under the same hash, so every table sievekv writes uses `KEY_SKETCH_PRECISION` and
 * key-sketch.ts's hash.
 */
import { TextDecoder, TextEncoder } from 'node:util';
import { corruption } from '../errors.js';
import { HyperLogLog } from '../filter/hyperloglog.js';
import { bytewiseComparator } from '../format/comparator.js';
import { ByteReader, MAX_VARINT64_LENGTH, putVarint64 } from '../format/varint.js';
import type { Block } from './block.js';
import { BlockBuilder } from './block-builder.js';
import type { FilterScope } from './metaindex.js';

/** Persisted (through every sketch that must merge): the precision of table key sketches. */
export const KEY_SKETCH_PRECISION = 12 as const;

/** Persisted: property names. Never change. */
export const PropertyName = {
  NUM_ENTRIES: 'sievekv.num.entries',
  NUM_DELETIONS: 'sievekv.num.deletions',
  NUM_USER_KEYS: 'sievekv.num.user.keys',
  RAW_KEY_SIZE: 'sievekv.raw.key.size',
  RAW_VALUE_SIZE: 'sievekv.raw.value.size',
  DATA_SIZE: 'sievekv.data.size',
  INDEX_SIZE: 'sievekv.index.size',
  FILTER_SIZE: 'sievekv.filter.size',
  NUM_DATA_BLOCKS: 'sievekv.num.data.blocks',
  SMALLEST_SEQ: 'sievekv.smallest.seq',
  LARGEST_SEQ: 'sievekv.largest.seq',
  FILTER_POLICY: 'sievekv.filter.policy',
  FILTER_SCOPE: 'sievekv.filter.scope',
  COMPRESSION: 'sievekv.compression',
  /** Written before `sievekv.keysketch2`: the key sketch over MurmurHash3 (read, never written). */
  KEY_SKETCH: 'sievekv.key.sketch',
  /** The key sketch over `keyHash` (key-sketch.ts). */
  KEY_SKETCH_2: 'sievekv.keysketch2',
} as const;

/** What a table says about itself. Counts are exact; the sketch estimates distinct user keys. */
export interface TableProperties {
  numEntries: number;
  numDeletions: number;
  /** Distinct user keys (versions of one key count once). */
  numUserKeys: number;
  rawKeySize: number;
  rawValueSize: number;
  dataSize: number;
  indexSize: number;
  filterSize: number;
  numDataBlocks: number;
  /** 0 / 0 for a table without entries. */
  smallestSequence: number;
  largestSequence: number;
  /** The filter policy's name, '' when the table has no filter. */
  filterPolicy: string;
  /** Where the table's filters are: 'block', 'table', 'both' (each kind once), or '' for none. */
  filterScope: FilterScope | 'both' | '';
  /** The compression the builder was asked for (blocks that did not shrink are stored raw). */
  compression: string;
  /** HyperLogLog of the user keys (key-sketch.ts); undefined if the table has none stored. */
  keySketch: HyperLogLog | undefined;
  /**
   * The older sketch over MurmurHash3 (`sievekv.key.sketch`), of a table written before
   * `keySketch` existed; it counts the table alone, and merges with no `keySketch`.
   */
  murmurKeySketch?: HyperLogLog | undefined;
}

const NUMBER_PROPERTIES = [
  ['numEntries', PropertyName.NUM_ENTRIES],
  ['numDeletions', PropertyName.NUM_DELETIONS],
  ['numUserKeys', PropertyName.NUM_USER_KEYS],
  ['rawKeySize', PropertyName.RAW_KEY_SIZE],
  ['rawValueSize', PropertyName.RAW_VALUE_SIZE],
  ['dataSize', PropertyName.DATA_SIZE],
  ['indexSize', PropertyName.INDEX_SIZE],
  ['filterSize', PropertyName.FILTER_SIZE],
  ['numDataBlocks', PropertyName.NUM_DATA_BLOCKS],
  ['smallestSequence', PropertyName.SMALLEST_SEQ],
  ['largestSequence', PropertyName.LARGEST_SEQ],
] as const;

const TEXT_PROPERTIES = [
  ['filterPolicy', PropertyName.FILTER_POLICY],
  ['filterScope', PropertyName.FILTER_SCOPE],
  ['compression', PropertyName.COMPRESSION],
] as const;

/** Properties of an empty table with nothing known (what absent names read as). */
export function emptyTableProperties(): TableProperties {
  return {
    numEntries: 0,
    numDeletions: 0,
    numUserKeys: 0,
    rawKeySize: 0,
    rawValueSize: 0,
    dataSize: 0,
    indexSize: 0,
    filterSize: 0,
    numDataBlocks: 0,
    smallestSequence: 0,
    largestSequence: 0,
    filterPolicy: '',
    filterScope: '',
    compression: '',
    keySketch: undefined,
  };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** The properties block contents (before trailer). Returns an owned array. */
export function encodeTableProperties(props: TableProperties): Uint8Array {
  const entries: { name: Uint8Array; value: Uint8Array }[] = [];
  const scratch = new Uint8Array(MAX_VARINT64_LENGTH);
  for (const [field, name] of NUMBER_PROPERTIES) {
    entries.push({ name: encoder.encode(name), value: scratch.slice(0, putVarint64(scratch, 0, props[field])) });
  }
  for (const [field, name] of TEXT_PROPERTIES) {
    entries.push({ name: encoder.encode(name), value: encoder.encode(props[field]) });
  }
  if (props.keySketch !== undefined) {
    entries.push({ name: encoder.encode(PropertyName.KEY_SKETCH_2), value: props.keySketch.serialize() });
  }
  entries.sort((a, b) => bytewiseComparator.compare(a.name, 0, a.name.length, b.name, 0, b.name.length));
  const builder = new BlockBuilder(1, 8192);
  for (const e of entries) builder.add(e.name, e.value);
  return builder.finish().slice();
}

const NUMBER_FIELDS = new Map<string, (typeof NUMBER_PROPERTIES)[number][0]>(
  NUMBER_PROPERTIES.map(([field, name]) => [name, field]),
);
const TEXT_FIELDS = new Map<string, (typeof TEXT_PROPERTIES)[number][0]>(
  TEXT_PROPERTIES.map(([field, name]) => [name, field]),
);

/**
 * Decodes a properties block. Unknown names are ignored; a known name with a malformed value is
 * CORRUPTION naming the block's file and offset (the block passed its checksum, so the writer
 * was wrong or the file is not ours).
 */
export function decodeTableProperties(block: Block): TableProperties {
  const props = emptyTableProperties();
  const where = { file: block.file, offset: block.offset };
  const it = block.newIterator(bytewiseComparator);
  const reader = new ByteReader(block.data, 0, 0, block.file, block.offset ?? 0);
  for (it.seekToFirst(); it.valid(); it.next()) {
    let name: string;
    try {
      name = decoder.decode(it.key());
    } catch {
      continue; // not one of ours
    }
    const numberField = NUMBER_FIELDS.get(name);
    if (numberField !== undefined) {
      reader.reset(it.data, it.valueStart, it.valueEnd);
      const v = reader.varint64();
      if (reader.pos !== it.valueEnd) throw corruption(`property ${name} has trailing bytes`, where);
      props[numberField] = v;
      continue;
    }
    const textField = TEXT_FIELDS.get(name);
    if (textField !== undefined) {
      let text: string;
      try {
        text = decoder.decode(it.value());
      } catch (cause) {
        throw corruption(`property ${name} is not UTF-8`, { ...where, cause });
      }
      if (textField === 'filterScope') {
        if (text !== 'block' && text !== 'table' && text !== 'both' && text !== '') {
          throw corruption(`property ${name} is "${text}", not block, table or both`, where);
        }
        props.filterScope = text;
      } else {
        props[textField] = text;
      }
      continue;
    }
    if (name === PropertyName.KEY_SKETCH_2 || name === PropertyName.KEY_SKETCH) {
      let sketch: HyperLogLog;
      try {
        sketch = HyperLogLog.deserialize(it.value());
      } catch (cause) {
        throw corruption(`property ${name} is not a valid sketch`, { ...where, cause });
      }
      if (name === PropertyName.KEY_SKETCH_2) props.keySketch = sketch;
      else props.murmurKeySketch = sketch;
    }
  }
  return props;
}
