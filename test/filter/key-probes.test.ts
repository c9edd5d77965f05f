/** KeyProbes: one hash per policy per key, however many tables ask; probes reused across keys. */
import { describe, expect, it } from 'vitest';
import { BloomFilterPolicy } from '../../src/filter/bloom.js';
import { KeyProbes } from '../../src/filter/key-probes.js';
import type { FilterPolicy, FilterProbe } from '../../src/filter/policy.js';

/** Wraps a policy, counting `setKey` calls (hashes) and probes made. */
function counting(inner: FilterPolicy): FilterPolicy & { hashes: number; probesMade: number } {
  const policy = {
    name: inner.name,
    hashes: 0,
    probesMade: 0,
    createFilter: (keys: readonly Uint8Array[]) => inner.createFilter(keys),
    keyMayMatch: (key: Uint8Array, filter: Uint8Array) => inner.keyMayMatch(key, filter),
    newProbe(): FilterProbe {
      policy.probesMade++;
      const probe = inner.newProbe();
      return {
        setKey(key: Uint8Array) {
          policy.hashes++;
          probe.setKey(key);
        },
        mayMatch: (f: Uint8Array, s?: number, e?: number) => probe.mayMatch(f, s, e),
      };
    },
  };
  return policy;
}

const enc = new TextEncoder();

describe('KeyProbes', () => {
  it('hashes a key once per policy, lazily, however many filters ask', () => {
    const a = counting(new BloomFilterPolicy(10));
    const b = counting(new BloomFilterPolicy(4));
    const probes = new KeyProbes();
    probes.reset(enc.encode('k1'));
    expect(a.hashes + b.hashes).toBe(0); // nothing until asked
    for (let i = 0; i < 5; i++) probes.probeFor(a);
    expect(a.hashes).toBe(1);
    expect(b.hashes).toBe(0);
    probes.probeFor(b);
    probes.probeFor(b);
    expect(b.hashes).toBe(1);
    probes.reset(enc.encode('k2'));
    probes.probeFor(a);
    probes.probeFor(a);
    expect(a.hashes).toBe(2);
    expect(b.hashes).toBe(1);
    expect(a.probesMade + b.probesMade).toBe(2); // one probe per policy, reused across keys
  });

  it('answers exactly as the policy does for the current key', () => {
    const policy = new BloomFilterPolicy(10);
    const keys = Array.from({ length: 200 }, (_, i) => enc.encode(`key${i}`));
    const filter = policy.createFilter(keys.slice(0, 100));
    const probes = new KeyProbes();
    for (const k of keys) {
      probes.reset(k);
      expect(probes.key).toBe(k);
      expect(probes.probeFor(policy).mayMatch(filter)).toBe(policy.keyMayMatch(k, filter));
    }
    for (const k of keys.slice(0, 100)) {
      probes.reset(k);
      expect(probes.probeFor(policy).mayMatch(filter)).toBe(true);
    }
  });

  it('before any reset it probes the empty key', () => {
    const policy = new BloomFilterPolicy(10);
    const filter = policy.createFilter([new Uint8Array(0)]);
    expect(new KeyProbes().probeFor(policy).mayMatch(filter)).toBe(true);
  });
});
