/** EntryIterator's lifetime (release exactly once), seek, and the DB iterator's error paths. */
import { describe, expect, it } from 'vitest';
import { isSieveError } from '../../src/errors.js';
import { encodeInternalKey, ValueType } from '../../src/format/internal-key.js';
import { DBIterator } from '../../src/iterator/db-iterator.js';
import { createEntryIterator } from '../../src/iterator/entry-iterator.js';
import type { InternalIterator } from '../../src/iterator/internal-iterator.js';
import { resolveIteratorOptions, type IteratorRangeOptions } from '../../src/iterator/iterator-options.js';
import { ArrayIterator, type Entry } from './array-iterator.js';
import { compareEntries } from './iterator-contract.js';

const put = (k: string, seq: number, v: string): Entry => ({
  key: encodeInternalKey(Buffer.from(k), seq, ValueType.VALUE),
  value: Buffer.from(v),
});
const del = (k: string, seq: number): Entry => ({ key: encodeInternalKey(Buffer.from(k), seq, ValueType.DELETION), value: new Uint8Array(0) });

const ENTRIES = [put('a', 1, 'a1'), put('b', 2, 'b2'), del('b', 5), put('c', 3, 'c3'), put('c', 6, 'c6'), put('d', 4, 'd4')].sort(compareEntries);

function open(options?: IteratorRangeOptions, sequence = 10, source: InternalIterator = new ArrayIterator(ENTRIES)) {
  const state = { releases: 0, source };
  const it = createEntryIterator(source, sequence, resolveIteratorOptions(options), () => state.releases++);
  return { it, state };
}

const text = (it: Iterable<[Buffer, Buffer]>): string[] => [...it].map(([k, v]) => `${k}=${v}`);

describe('EntryIterator', () => {
  it('shows the snapshot: newest visible version, deletions hidden', () => {
    expect(text(open().it)).toEqual(['a=a1', 'c=c6', 'd=d4']);
    expect(text(open(undefined, 4).it)).toEqual(['a=a1', 'b=b2', 'c=c3', 'd=d4']);
    expect(text(open({ reverse: true }, 5).it)).toEqual(['d=d4', 'c=c3', 'a=a1']);
    expect(text(open(undefined, 0).it)).toEqual([]);
  });

  it('releases exactly once on exhaustion, then reports done and refuses seek', async () => {
    const { it, state } = open();
    expect(text(it)).toHaveLength(3);
    expect(state.releases).toBe(1);
    expect(await it.next()).toEqual({ done: true, value: undefined });
    expect(it.nextSync()).toBeUndefined();
    it.close();
    expect(state.releases).toBe(1);
    expect(() => it.seek('a')).toThrow(expect.objectContaining({ code: 'CLOSED' }));
  });

  it('releases when a for await loop breaks, and when a for...of loop breaks', async () => {
    const a = open();
    for await (const [k] of a.it) {
      expect(k.toString()).toBe('a');
      break;
    }
    expect(a.state.releases).toBe(1);
    expect(a.it.closed).toBe(true);
    const b = open();
    for (const [k] of b.it) {
      expect(k.toString()).toBe('a');
      break;
    }
    expect(b.state.releases).toBe(1);
  });

  it('releases on close(), Symbol.asyncDispose and Symbol.dispose, once each', async () => {
    const a = open();
    a.it.close();
    a.it.close();
    expect(a.state.releases).toBe(1);
    const b = open();
    await b.it[Symbol.asyncDispose]();
    await b.it[Symbol.asyncDispose]();
    expect(b.state.releases).toBe(1);
    const c = open();
    c.it[Symbol.dispose]();
    expect(c.state.releases).toBe(1);
    expect((c.state.source as ArrayIterator).closed).toBe(1);
  });

  it('limit: stops after limit entries and releases; 0 yields nothing', () => {
    const a = open({ limit: 2 });
    expect(text(a.it)).toEqual(['a=a1', 'c=c6']);
    expect(a.state.releases).toBe(1);
    const b = open({ limit: 0 });
    expect(text(b.it)).toEqual([]);
    expect(b.state.releases).toBe(1);
  });

  it('seek repositions within the bounds, forward and reverse; the limit counts all yielded', () => {
    const a = open({ lt: 'd' });
    expect(a.it.nextSync()?.[0].toString()).toBe('a');
    a.it.seek('b');
    expect(text(a.it)).toEqual(['c=c6']); // d is out of bounds
    const b = open({ reverse: true, limit: 2 });
    b.it.seek('c\0');
    expect(b.it.nextSync()?.[0].toString()).toBe('c');
    b.it.seek('bb');
    expect(text(b.it)).toEqual(['a=a1']); // b is deleted; then the limit
    const c = open({ gt: 'a' });
    c.it.seek(Buffer.from('0'));
    expect(text(c.it)).toEqual(['c=c6', 'd=d4']);
    expect(() => open().it.seek(42 as never)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });

  it('an error from the source propagates, releases once, and leaves the iterator closed', async () => {
    const source = new ArrayIterator(ENTRIES);
    let moves = 0;
    const failing: InternalIterator = {
      valid: () => source.valid(),
      seekToFirst: () => source.seekToFirst(),
      seekToLast: () => source.seekToLast(),
      seek: (t) => source.seek(t),
      next: () => {
        if (++moves === 2) throw new Error('disk on fire');
        source.next();
      },
      prev: () => source.prev(),
      key: () => source.key(),
      value: () => source.value(),
      close: () => source.close(),
    };
    const { it, state } = open(undefined, 10, failing);
    await expect((async () => {
      for await (const _ of it) void _;
    })()).rejects.toThrow('disk on fire');
    expect(state.releases).toBe(1);
    expect(it.closed).toBe(true);
    expect(await it.next()).toEqual({ done: true, value: undefined });
    expect(source.closed).toBe(1);
  });

  it('a bad snapshot sequence is INVALID_ARGUMENT and still releases and closes the source', () => {
    const source = new ArrayIterator(ENTRIES);
    let releases = 0;
    expect(() => createEntryIterator(source, -1, resolveIteratorOptions(undefined), () => releases++)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    expect(releases).toBe(1);
    expect(source.closed).toBe(1);
  });

  it('nextv(n): up to n entries per call, in order, within bounds and limit; empty at the end, the iterator still open', async () => {
    const a = open({ limit: 3 });
    expect(a.it.nextvSync(2).map(([k, v]) => `${k}=${v}`)).toEqual(['a=a1', 'c=c6']);
    expect((await a.it.nextv(5)).map(([k, v]) => `${k}=${v}`)).toEqual(['d=d4']); // the limit
    expect(a.it.nextvSync(5)).toEqual([]);
    expect(a.state.releases).toBe(0); // stepped by hand: open until closed
    a.it.close();
    expect(a.it.nextvSync(1)).toEqual([]);
    const b = open({ reverse: true, gte: 'b' });
    expect(b.it.nextvSync(10).map(([k]) => `${k}`)).toEqual(['d', 'c']);
    b.it.seek('c');
    expect(b.it.nextvSync(10).map(([k]) => `${k}`)).toEqual(['c']); // after a seek it goes on
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => open().it.nextvSync(bad)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    await expect(open().it.nextv(0)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('copy: false yields views over the same entries (copied here before each next call); a bad copy is INVALID_ARGUMENT', () => {
    for (const options of [{}, { reverse: true }, { gte: 'b', values: false }, { limit: 2 }]) {
      const copied = open(options).it;
      const viewed = open({ ...options, copy: false }).it;
      const want = copied.nextvSync(10).map(([k, v]) => `${k}=${v}`);
      const got: string[] = [];
      for (let e = viewed.nextSync(); e !== undefined; e = viewed.nextSync()) got.push(`${Buffer.from(e[0])}=${Buffer.from(e[1])}`);
      expect(got).toEqual(want);
    }
    expect(() => open({ copy: 'no' } as never)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });

  it('yields owned copies', () => {
    const { it } = open({ reverse: true });
    const all = [...it];
    expect(all.map(([k]) => k.toString())).toEqual(['d', 'c', 'a']);
    all[0]![0][0] = 0x7a; // the caller may scribble on what it got
    expect(ENTRIES.some((e) => e.key[0] === 0x7a)).toBe(false);
  });
});

describe('DBIterator errors', () => {
  const corrupt = (e: Entry): void => {
    const it = new DBIterator(new ArrayIterator([put('a', 1, 'x'), e]), 10);
    let err: unknown;
    try {
      for (it.seekToFirst(); it.valid(); it.next());
    } catch (x) {
      err = x;
    }
    expect(isSieveError(err, 'CORRUPTION')).toBe(true);
    expect(it.valid()).toBe(false);
  };

  it('a malformed internal key in a scan is CORRUPTION', () => {
    const badType = put('b', 2, 'y');
    badType.key[badType.key.length - 8] = 7;
    corrupt(badType);
    corrupt({ key: Uint8Array.of(0x62, 1, 2), value: new Uint8Array(0) });
    const hugeSeq = put('b', 2, 'y');
    hugeSeq.key.fill(0xff, hugeSeq.key.length - 4);
    corrupt(hugeSeq);
  });

  it('key/value/next/prev need a position; everything after close is CLOSED', () => {
    const it = new DBIterator(new ArrayIterator(ENTRIES), 10);
    expect(() => it.key()).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => it.next()).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    it.seekToFirst();
    expect(Buffer.from(it.value()).toString()).toBe('a1');
    it.close();
    it.close();
    expect(it.valid()).toBe(false);
    expect(() => it.seekToLast()).toThrow(expect.objectContaining({ code: 'CLOSED' }));
    expect(() => it.key()).toThrow(expect.objectContaining({ code: 'CLOSED' }));
  });

  it('rejects a snapshot that is not a sequence number', () => {
    for (const s of [-1, 1.5, Number.NaN, 2 ** 53]) {
      expect(() => new DBIterator(new ArrayIterator([]), s)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    }
  });
});
