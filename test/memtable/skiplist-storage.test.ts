/**
 * SkipList.userKeyRangesInStorage: every node's user key, read in the order the nodes lie in the
 * buffer (the deferred memtable filter's fill walks it so). Checked against the links' walk in
 * key order, for lists built by inserts in any order and by loadSorted, and for a list over
 * exported storage (an image's); storage that is not provably the linked nodes gives null, and a
 * memtable's filter is then filled along the links (no key of the list left out).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Lookup, MemTable } from '../../src/memtable/memtable.js';
import { SkipList, skipListStateProblem, type SkipListState } from '../../src/memtable/skiplist.js';
import { ValueType, writeTrailer } from '../../src/format/internal-key.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** The user keys the links give, in key order, as hex. */
function linkedKeys(list: SkipList): string[] {
  const out: string[] = [];
  for (let node = list.first(); node !== 0; node = list.next(node)) out.push(hex(list.keyOf(node)));
  return out;
}

/** The user keys the storage walk gives, as hex (storage order). */
function storedKeys(list: SkipList): string[] | null {
  const ranges = list.userKeyRangesInStorage();
  if (ranges === null) return null;
  expect(ranges.length).toBe(2 * list.count);
  const out: string[] = [];
  for (let i = 0; i < list.count; i++) out.push(hex(list.bytes.subarray(ranges[2 * i]!, ranges[2 * i + 1]!)));
  return out;
}

/**
 * An image whose linked node lies inside another node's value (a review's reproduction): a list of
 * one node 'a' with a 64-byte value; a node 'b' written inside that value, and the head linked to
 * 'b' alone. skipListStateProblem accepts it (the chain holds one node, in order); the storage
 * tiles into one node, 'a'. `buffer()` gives a fresh copy of its storage.
 */
function imageWithNodeInsideValue(): { image: SkipListState; buffer: () => ArrayBuffer } {
  const list = new SkipList(4096);
  list.insert(new TextEncoder().encode('a'), 1, ValueType.VALUE, new Uint8Array(64));
  const state = list.exportState();
  const w = new Int32Array(state.buffer as ArrayBuffer);
  const b = new Uint8Array(state.buffer as ArrayBuffer);
  const a = list.first();
  const valueStart = (a + 3 + w[a]!) * 4 + 1 + 8;
  const inner = Math.ceil(valueStart / 4); // a word inside a's value
  w[inner] = 1; // height
  w[inner + 1] = 1; // key length
  w[inner + 2] = 0; // value length
  w[inner + 3] = 0; // level-0 link: none
  b[(inner + 4) * 4] = 0x62; // 'b'
  writeTrailer(b, (inner + 4) * 4 + 1, 1, ValueType.VALUE);
  expect((inner + 4) * 4 + 9).toBeLessThanOrEqual(valueStart + 64);
  for (let level = 0; level < 12; level++) w[3 + level] = 0;
  w[3] = inner; // the head links 'b' only
  const image = { ...state, height: 1 };
  return { image, buffer: () => (state.buffer as ArrayBuffer).slice(0) };
}

const entries = fc.array(fc.record({ key: fc.uint8Array({ maxLength: 40 }), value: fc.uint8Array({ maxLength: 300 }) }), { maxLength: 300 });

describe('SkipList.userKeyRangesInStorage', () => {
  it('gives every inserted key once, in insertion order, whatever the order of the keys', () => {
    fc.assert(
      fc.property(entries, (es) => {
        const list = new SkipList(1024); // small: inserts grow the buffer
        es.forEach((e, i) => list.insert(e.key, i + 1, ValueType.VALUE, e.value));
        const stored = storedKeys(list);
        expect(stored).toEqual(es.map((e) => hex(e.key)));
        expect([...stored!].sort()).toEqual([...linkedKeys(list)].sort());
      }),
      { numRuns: 200 },
    );
  });

  it('walks a list over exported storage (as an image is read back), and one loaded sorted', () => {
    const list = new SkipList();
    for (let i = 0; i < 3000; i++) list.insert(new TextEncoder().encode(`key-${(i * 7919) % 3000}`), i + 1, ValueType.VALUE, new Uint8Array(i % 97));
    const again = SkipList.fromState(list.exportState());
    expect([...storedKeys(again)!].sort()).toEqual([...linkedKeys(again)].sort());

    const src = new TextEncoder().encode('aaabbbccc');
    const fields = new Int32Array([ValueType.VALUE, 0, 3, 0, 0, ValueType.VALUE, 3, 3, 0, 2, ValueType.VALUE, 6, 3, 0, 9]);
    const sorted = new SkipList();
    sorted.loadSorted(src, fields, new Float64Array([1, 2, 3]), new Int32Array([0, 1, 2]), 3);
    expect(storedKeys(sorted)).toEqual(linkedKeys(sorted));
  });

  it('is null for storage that does not tile into the list\'s nodes', () => {
    const list = new SkipList();
    for (let i = 0; i < 100; i++) list.insert(new TextEncoder().encode(`k${i}`), i + 1, ValueType.VALUE, new Uint8Array(5));
    const state = list.exportState();
    // One node fewer than the words hold.
    expect(SkipList.fromState({ ...state, count: state.count - 1 }).userKeyRangesInStorage()).toBeNull();
    // Words in use cut inside the last node.
    expect(SkipList.fromState({ ...list.exportState(), words: state.words - 1 }).userKeyRangesInStorage()).toBeNull();
    // A node's height out of range.
    const bad = list.exportState();
    const words = new Int32Array(bad.buffer as ArrayBuffer);
    const first = list.first();
    words[first] = 0;
    expect(SkipList.fromState(bad).userKeyRangesInStorage()).toBeNull();
  });

  it('is null for an image whose linked node lies inside another node\'s value, and the memtable\'s filter still holds that key', () => {
    const { image, buffer } = imageWithNodeInsideValue();
    expect(skipListStateProblem(image, 10)).toBeNull();
    expect(SkipList.fromState({ ...image, buffer: buffer() }).userKeyRangesInStorage()).toBeNull();
    const withFilter = new MemTable({ bloomBits: 1 << 16, state: { list: image, maxSequence: 1 } });
    expect(withFilter.get(new TextEncoder().encode('b'), 10)).toBe(Lookup.FOUND);
    // So with the filter deferred: the fill's walk finds the storage is not the linked nodes and
    // fills the filter along the links; 'b' is found before, during and after.
    const deferred = new MemTable({ bloomBits: 1 << 16, state: { list: { ...image, buffer: buffer() }, maxSequence: 1 }, deferBloom: true });
    for (let i = 0; i < 70; i++) expect(deferred.get(new TextEncoder().encode('b'), 10)).toBe(Lookup.FOUND);
    expect(deferred.bloomDeferred).toBe(false);
    expect(deferred.get(new TextEncoder().encode('b'), 10)).toBe(Lookup.FOUND);
    expect(deferred.get(new TextEncoder().encode('a'), 10)).toBe(Lookup.NOT_FOUND);
  });

  it('a key inserted during a deferred fill, ahead of the linked node the storage does not hold, leaves that node in the filter', () => {
    // A review's reproduction: imageWithNodeInsideValue's image (the head links 'b' inside 'a''s
    // value; the storage tiles into 'a' alone), its filter deferred. The fill's first slice tiles 'a'; then 'a' is
    // added, which the head now links before 'b'. The link check must follow the new node on to
    // 'b', find it is not a tiled node, and fill along the links: 'b' is still found.
    const { image } = imageWithNodeInsideValue();
    expect(skipListStateProblem(image, 10)).toBeNull();
    const mem = new MemTable({ bloomBits: 1 << 16, state: { list: image, maxSequence: 1 }, deferBloom: true });
    const keyB = new TextEncoder().encode('b');
    for (let i = 0; i < 65; i++) expect(mem.get(keyB, 10)).toBe(Lookup.FOUND); // the 65th begins the fill
    expect(mem.bloomDeferred).toBe(true);
    mem.add(2, ValueType.VALUE, new TextEncoder().encode('a'), new Uint8Array(1));
    for (let i = 0; i < 5; i++) expect(mem.get(keyB, 10)).toBe(Lookup.FOUND);
    expect(mem.bloomDeferred).toBe(false);
    expect(mem.get(keyB, 10)).toBe(Lookup.FOUND);
    expect(mem.get(new TextEncoder().encode('a'), 10)).toBe(Lookup.FOUND);
  });

  it('a damaged image\'s unlinked node whose link leads into the bytes of nodes inserted during the fill: the check ends, and the linked keys stay found', () => {
    // A second review's reproduction: storage tiling into J (word 15) and A (29), two entries; the
    // level-0 chain is head → A → C, C lying inside J's value, so J is tiled but not linked, and
    // J's link (60) lies past the storage. skipListStateProblem accepts it (the chain holds two
    // nodes in order). An insert during the fill puts word 60 inside a key whose every word reads
    // 60: following J's link through inserted nodes must stop, not go round forever.
    const buffer = new ArrayBuffer(36 * 4);
    const w = new Int32Array(buffer);
    const b = new Uint8Array(buffer);
    w[0] = 12; // the head's height
    w[3] = 29; // head → A
    w[15] = 1; w[16] = 1; w[17] = 31; w[18] = 60; // J: key 'z', a 31-byte value holding C, link 60
    b[76] = 0x7a;
    writeTrailer(b, 77, 3, ValueType.VALUE);
    w[22] = 1; w[23] = 1; w[24] = 0; w[25] = 0; // C: key 'c', no value, link none
    b[104] = 0x63;
    writeTrailer(b, 105, 2, ValueType.VALUE);
    w[29] = 1; w[30] = 1; w[31] = 0; w[32] = 22; // A: key 'a', link C
    b[132] = 0x61;
    writeTrailer(b, 133, 1, ValueType.VALUE);
    const state = { buffer, words: 36, count: 2, height: 1 };
    expect(skipListStateProblem(state, 10)).toBeNull();
    const mem = new MemTable({ bloomBits: 1 << 12, state: { list: state, maxSequence: 10 }, deferBloom: true });
    const c = new Uint8Array([0x63]);
    for (let i = 0; i < 65; i++) expect(mem.get(c, 10)).toBe(Lookup.FOUND); // the 65th begins the fill
    const key = new Uint8Array(160);
    new Int32Array(key.buffer).fill(60);
    mem.add(11, ValueType.VALUE, key, new Uint8Array(0));
    for (let i = 0; i < 3; i++) expect(mem.get(c, 20)).toBe(Lookup.FOUND);
    expect(mem.bloomDeferred).toBe(false);
    expect(mem.get(new Uint8Array([0x61]), 20)).toBe(Lookup.FOUND);
    expect(mem.get(key, 20)).toBe(Lookup.FOUND);
  });

  it('walked in slices of any size, gives what the one pass gives, and inserts made meanwhile do not upset it', () => {
    fc.assert(
      fc.property(entries, fc.integer({ min: 1, max: 40 }), fc.array(fc.uint8Array({ maxLength: 20 }), { maxLength: 30 }), (es, slice, later) => {
        const list = new SkipList(1024);
        es.forEach((e, i) => list.insert(e.key, i + 1, ValueType.VALUE, e.value));
        const whole = storedKeys(list);
        const walk = list.storageWalk();
        const ranges = new Int32Array(2 * slice);
        const keys: string[] = [];
        let step = 0;
        while (!walk.linking) {
          const n = list.walkStorage(walk, ranges, slice);
          expect(n).toBeGreaterThanOrEqual(0);
          for (let i = 0; i < n; i++) keys.push(hex(list.bytes.subarray(ranges[2 * i]!, ranges[2 * i + 1]!)));
          // An insert between slices: a node past the walk's end, which it leaves out.
          if (step < later.length) list.insert(later[step]!, es.length + 1 + step, ValueType.VALUE, new Uint8Array(3));
          step++;
        }
        expect(keys).toEqual(whole);
        while (!walk.done) {
          expect(list.checkStorageLinks(walk, slice)).toBe(true);
          if (step < later.length) list.insert(later[step]!, es.length + 1 + step, ValueType.VALUE, new Uint8Array(3));
          step++;
        }
      }),
      { numRuns: 150 },
    );
  });
});

