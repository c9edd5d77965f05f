import { expect, it } from 'vitest';
import { ValueType, writeTrailer } from '../../src/format/internal-key.js';
import { Lookup, MemTable } from '../../src/memtable/memtable.js';
import { SkipList, skipListStateProblem } from '../../src/memtable/skiplist.js';

it('an image whose chain node sits inside a tiled node passes validation; the storage-order fill misses its key', () => {
  const list = new SkipList(4096);
  list.insert(new TextEncoder().encode('a'), 1, ValueType.VALUE, new Uint8Array(64));
  const state = list.exportState();
  const w = new Int32Array(state.buffer as ArrayBuffer);
  const b = new Uint8Array(state.buffer as ArrayBuffer);
  const A = 15; // HEAD_WORDS
  const h = w[A]!;
  const valueStart = (A + 3 + h) * 4 + 1 + 8;
  const F = Math.ceil(valueStart / 4); // a word inside A's value
  w[F] = 1; w[F + 1] = 1; w[F + 2] = 0; w[F + 3] = 0; // height 1, key 1 byte, value 0, next 0
  b[(F + 4) * 4] = 0x62; // 'b'
  writeTrailer(b, (F + 4) * 4 + 1, 1, ValueType.VALUE);
  expect((F + 4) * 4 + 9).toBeLessThanOrEqual(valueStart + 64);
  for (let l = 0; l < 12; l++) w[3 + l] = 0;
  w[3] = F; // head -> F only
  const image = { ...state, height: 1 };
  expect(skipListStateProblem(image, 10)).toBeNull(); // the image is accepted
  const bKey = new TextEncoder().encode('b');
  // No filter: the link walk finds 'b'.
  expect(new MemTable({ state: { list: { ...image, buffer: (state.buffer as ArrayBuffer).slice(0) }, maxSequence: 1 } }).get(bKey, 10)).toBe(Lookup.FOUND);
  // With a filter filled from storage order: it holds 'a' (not in the chain), not 'b'.
  const withBloom = new MemTable({ bloomBits: 1 << 16, state: { list: image, maxSequence: 1 } });
  expect(withBloom.get(bKey, 10)).toBe(Lookup.NOT_FOUND);
});
