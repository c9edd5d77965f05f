/**
 * The README's examples of issue 12's calls, run as written (with the data they assume) and
 * their comments checked: "Reads of many keys, range deletion, sizes, seeking again" and
 * "Level adapter: sievekv/level".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB } from '../../src/db.js';
import { SieveLevel } from '../../src/level/index.js';

const root = mkdtempSync(join(tmpdir(), 'sievekv-readme-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('README examples', () => {
  it('reads of many keys, range deletion, sizes, seeking again', async () => {
    const db = await DB.open(join(root, 'api'), { writeBufferSize: 64 * 1024 });
    await db.put('user:1', JSON.stringify({ name: 'Ada' }));
    for (let i = 2; i < 300; i++) await db.put(`user:${i}`, 'u'.repeat(100));
    for (let i = 0; i < 500; i++) await db.put(`session:${i}`, 'x'.repeat(100));
    for (const k of 'abcdefghijklmnopqrstuvwxyz') await db.put(k, k);
    for (let i = 100; i < 300; i++) await db.put(`x:${i}`, 'x'); // the last 200 keys
    await db.compactRange();

    expect(await db.has('user:1')).toBe(true); // true
    const [a, missing] = await db.getMany(['user:1', 'nope']); // Buffer, undefined
    expect(a).toBeInstanceOf(Buffer);
    expect(missing).toBeUndefined();
    expect(await db.clear({ gte: 'session:', lt: 'session;' })).toBe(500); // resolves with the count
    expect(await db.clear({ reverse: true, limit: 100 })).toBe(100); // the last 100 keys
    expect(await db.has('x:201')).toBe(true); // the last 100: y, z and x:202 … x:299
    expect(await db.has('x:202')).toBe(false);
    expect(await db.has('z')).toBe(false);
    const bytes = await db.approximateSize('user:', 'user;'); // table bytes of that range
    expect(bytes).toBeGreaterThan(1000); // 298 values of 100 bytes, compressed (lz4)

    await db.batch([...'abcdefghijklmnopqrstuvwxyz'].map((k) => ({ type: 'put' as const, key: k, value: k })));
    const it = db.iterator({ gte: 'a', lt: 'n' });
    while ((await it.next()).done === false) {} // to the end: done, but still open
    expect(it.closed).toBe(false);
    it.seek('f'); // place it again and go on
    const seen: string[] = [];
    for (let e = it.nextSync(); e !== undefined; e = it.nextSync()) seen.push(e[0].toString());
    expect(seen.join('')).toBe('fghijklm');
    it.close(); // only close() (or db.close()) ends it
    expect(it.closed).toBe(true);
    await db.close();
  });

  it('Level adapter', async () => {
    const db = new SieveLevel<string, { name: string }>(join(root, 'level'), { valueEncoding: 'json', compression: 'snappy' });
    await db.put('user:1', { name: 'Ada' }); // opens on first use (deferred open)
    await db.batch().put('user:2', { name: 'Grace' }).del('user:3').write();
    const teams = db.sublevel<string, string[]>('teams', { valueEncoding: 'json' });
    await teams.put('compilers', ['user:2']); // stored under the key !teams!compilers
    const listed: [string, unknown][] = [];
    for await (const [key, value] of db.iterator({ gt: 'user:', limit: 10 })) listed.push([key, value]);
    expect(listed).toEqual([
      ['user:1', { name: 'Ada' }],
      ['user:2', { name: 'Grace' }],
    ]);
    const [ada, nobody] = await db.getMany(['user:1', 'user:9']);
    expect([ada, nobody]).toEqual([{ name: 'Ada' }, undefined]);
    expect(await db.has('user:1')).toBe(true); // true
    const snapshot = db.snapshot();
    await db.clear({ gte: 'user:', lt: 'user;' });
    expect(await db.get('user:1')).toBeUndefined();
    expect(await db.get('user:1', { snapshot })).toEqual({ name: 'Ada' }); // still { name: 'Ada' }
    await snapshot.close();
    expect(await teams.get('compilers')).toEqual(['user:2']);
    await db.close();
    // Keys of a sublevel are stored as Level stores them: the plain DB API reads the same bytes.
    const plain = await DB.open(join(root, 'level'));
    expect(JSON.parse((await plain.get('!teams!compilers'))!.toString())).toEqual(['user:2']);
    await plain.close();
  });
});
