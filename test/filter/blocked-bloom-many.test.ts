/**
 * blockedBloomMayMatchMany asks several blocked Bloom filters about one key in one loop (level 0's
 * filters, db/level0-filters.ts): each asked answer must be exactly what the probe's own
 * `mayMatch` says, entries not asked stay as they were, and a missing or malformed filter may match.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BlockedBloomFilterPolicy,
  blockedBloomMayMatchMany,
  MAY_MATCH,
  RULED_OUT,
  SKIP,
} from '../../src/filter/blocked-bloom.js';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';

const keyArb = fc.uint8Array({ minLength: 0, maxLength: 24 });

describe('blockedBloomMayMatchMany', () => {
  it('answers each asked filter as the probe does, leaves the others, for any filters and keys', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1, max: 24, noNaN: true }),
        fc.array(fc.option(fc.array(keyArb, { maxLength: 60 }), { nil: undefined }), { minLength: 0, maxLength: 12 }),
        fc.array(fc.constantFrom(SKIP, MAY_MATCH), { minLength: 12, maxLength: 16 }),
        keyArb,
        fc.boolean(),
        (bitsPerKey, keySets, asked, key, fromSet) => {
          const policy = new BlockedBloomFilterPolicy(bitsPerKey);
          const filters = keySets.map((keys) => (keys === undefined ? undefined : policy.createFilter(keys)));
          // Half the time the key is one of a set's keys, so the answers mix both outcomes.
          const someSet = keySets.find((s) => s !== undefined && s.length > 0);
          const probeKey = fromSet && someSet !== undefined ? someSet[0]! : key;
          const probe = policy.newProbe();
          probe.setKey(probeKey);
          const answers = Uint8Array.from(asked);
          blockedBloomMayMatchMany(probe, filters, answers);
          for (let i = 0; i < answers.length; i++) {
            const f = i < filters.length ? filters[i] : undefined;
            if (asked[i] === SKIP || f === undefined) expect(answers[i]).toBe(asked[i]);
            else expect(answers[i]).toBe(probe.mayMatch(f) ? MAY_MATCH : RULED_OUT);
          }
          // No false negative: a set holding the key is never ruled out.
          keySets.forEach((keys, i) => {
            if (keys?.some((k) => Buffer.compare(k, probeKey) === 0) && asked[i] === MAY_MATCH) expect(answers[i]).toBe(MAY_MATCH);
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('lets a malformed filter through (may match), as mayMatch does', () => {
    const policy = new BlockedBloomFilterPolicy(15);
    const good = policy.createFilter([Buffer.from('a'), Buffer.from('b')]);
    const truncated = good.subarray(0, good.length - 1);
    const badVersion = Uint8Array.from(good);
    badVersion[0] = 99;
    const empty = new Uint8Array(0);
    const probe = policy.newProbe();
    probe.setKey(Buffer.from('surely-absent-key-0123456789'));
    const filters = [truncated, badVersion, empty];
    const answers = new Uint8Array([MAY_MATCH, MAY_MATCH, MAY_MATCH]);
    blockedBloomMayMatchMany(probe, filters, answers);
    expect([...answers]).toEqual([MAY_MATCH, MAY_MATCH, MAY_MATCH]);
    for (const f of filters) expect(probe.mayMatch(f)).toBe(true);
    // The filter of no keys rules everything out, both ways.
    const none = policy.createFilter([]);
    const one = new Uint8Array([MAY_MATCH]);
    blockedBloomMayMatchMany(probe, [none], one);
    expect(one[0]).toBe(probe.mayMatch(none) ? MAY_MATCH : RULED_OUT);
  });

  it('leaves every answer as it is for a probe of another policy', () => {
    const probe = new BloomFilterPolicy(10).newProbe();
    probe.setKey(Buffer.from('k'));
    const filter = new BlockedBloomFilterPolicy(15).createFilter([]); // rules out everything
    const answers = new Uint8Array([MAY_MATCH, SKIP]);
    blockedBloomMayMatchMany(probe, [filter, filter], answers);
    expect([...answers]).toEqual([MAY_MATCH, SKIP]);
  });
});
