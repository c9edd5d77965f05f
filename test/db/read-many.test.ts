/**
 * `db.has` / `hasSync` and `db.getMany` / `getManySync`: values in the order asked, undefined
 * where absent, owned copies, all read at one moment (a snapshot's or now); typed errors for bad
 * input. A property checks both against `get` over keys in tables and memtables.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { MemFileSystem } from '../../src/fs/mem-fs.js';
import { codeOf } from '../support/error-code.js';


const text = (values: (Buffer | undefined)[]): (string | undefined)[] => values.map((v) => v?.toString());

describe('has and getMany', () => {
  it('answer in the order asked, undefined where absent, duplicates each with their own copy', async () => {
    const db = await DB.open('/db', { fs: new MemFileSystem() });
    await db.batch([
      { type: 'put', key: 'b', value: '2' },
      { type: 'put', key: 'a', value: '1' },
      { type: 'put', key: Buffer.from([0xff]), value: 'ff' },
      { type: 'put', key: 'empty', value: '' },
    ]);
    const keys = ['b', 'zz', Buffer.from([0xff]), 'a', 'b', 'empty'];
    const values = await db.getMany(keys);
    expect(text(values)).toEqual(['2', undefined, 'ff', '1', '2', '']);
    expect(text(db.getManySync(keys))).toEqual(text(values));
    values[0]![0] = 0x78; // owned: scribbling on one copy changes no other answer
    expect(values[4]!.toString()).toBe('2');
    expect((await db.get('b'))!.toString()).toBe('2');
    expect(await db.getMany([])).toEqual([]);
    expect(await db.has('a')).toBe(true);
    expect(await db.has('empty')).toBe(true); // an empty value is a value
    expect(db.hasSync('zz')).toBe(false);
    await db.del('a');
    expect(await db.has('a')).toBe(false);
    await db.close();
  });

  it('read at one snapshot: writes after it are invisible to every key', async () => {
    const db = await DB.open('/db', { fs: new MemFileSystem(), writeBufferSize: 1024 });
    await db.batch([
      { type: 'put', key: 'k1', value: 'old1' },
      { type: 'put', key: 'k2', value: 'old2' },
    ]);
    await db.compactRange();
    const snap = db.snapshot();
    await db.put('k1', 'new1');
    await db.del('k2');
    await db.put('k3', 'new3');
    expect(text(await db.getMany(['k3', 'k2', 'k1'], { snapshot: snap }))).toEqual([undefined, 'old2', 'old1']);
    expect(text(await db.getMany(['k3', 'k2', 'k1']))).toEqual(['new3', undefined, 'new1']);
    expect(await db.has('k2', { snapshot: snap })).toBe(true);
    expect(db.hasSync('k3', { snapshot: snap })).toBe(false);
    snap.release();
    expect(await codeOf(() => db.getMany(['k1'], { snapshot: snap }))).toBe('CLOSED');
    await db.close();
  });

  it('bad input is INVALID_ARGUMENT (the async forms reject), after close CLOSED', async () => {
    const db = await DB.open('/db', { fs: new MemFileSystem() });
    expect(await codeOf(() => db.getMany('a' as never))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => db.getMany(['a', 5] as never))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => db.getManySync(null as never))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => db.has(null as never))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => db.has('a', { snapshot: {} } as never))).toBe('INVALID_ARGUMENT');
    let promise: Promise<unknown> | undefined;
    expect(() => {
      promise = db.getMany(7 as never);
    }).not.toThrow();
    expect(await codeOf(() => promise)).toBe('INVALID_ARGUMENT');
    await db.close();
    expect(await codeOf(() => db.getMany(['a']))).toBe('CLOSED');
    expect(await codeOf(() => db.hasSync('a'))).toBe('CLOSED');
  });

  it('property: getMany and has agree with a model map (and with get), over tables and memtables', async () => {
    const key = fc.string({ unit: fc.constantFrom('a', 'b', 'c'), maxLength: 4 });
    const op = fc.oneof(
      fc.record({ t: fc.constant('put' as const), key, value: fc.string({ maxLength: 30 }) }),
      fc.record({ t: fc.constant('del' as const), key }),
      fc.record({ t: fc.constant('flush' as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), fc.array(key, { maxLength: 20 }), async (ops, asked) => {
        const db = await DB.open('/db', { fs: new MemFileSystem(), writeBufferSize: 1024, blockSize: 128 });
        try {
          const model = new Map<string, string>();
          for (const o of ops) {
            if (o.t === 'put') {
              db.putSync(o.key, o.value);
              model.set(o.key, o.value);
            } else if (o.t === 'del') {
              db.delSync(o.key);
              model.delete(o.key);
            } else {
              await db.compactRange();
            }
          }
          const expected = asked.map((k) => model.get(k));
          expect(asked.map((k) => db.getSync(k)?.toString())).toEqual(expected);
          expect(text(await db.getMany(asked))).toEqual(expected);
          for (const k of asked) expect(await db.has(k)).toBe(model.has(k));
        } finally {
          await db.close();
        }
      }),
      { numRuns: 100 },
    );
  });
});
