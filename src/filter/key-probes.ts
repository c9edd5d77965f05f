/**
 * KeyProbes: one user key, hashed at most once per filter policy, for all the tables one point
 * lookup consults ("hash once, probe many" across files; policy.ts has it within one filter).
 *
 * A lookup of key K may ask the filters of several level-0 tables and one table per deeper level.
 * Every table that uses the same policy object needs the same hash of K, so the lookup owns one
 * KeyProbes, calls `reset(K)` once, and each table asks `probeFor(policy)`: the first ask for a
 * policy since the reset hashes K for it (`FilterProbe.setKey`), later asks return the same probe
 * untouched. Probes are kept across resets, so the steady state allocates nothing.
 *
 * Ownership: one KeyProbes per caller of `get` at a time (it is mutable); the database keeps one
 * per thread, as lookups are synchronous. The key passed to `reset` is borrowed until the next
 * `reset`: it must not change while tables are being probed with it.
 *
 * Policies are told apart by object identity (a table holds the policy object it matched by name
 * from the database's list). Two instances of one policy class with different parameters may hash
 * differently, so identity is the safe test; a database has one or two policies, so the lookup is
 * a short linear scan.
 */
import type { FilterPolicy, FilterProbe } from './policy.js';

const EMPTY = new Uint8Array(0);

export class KeyProbes {
  private userKey: Uint8Array = EMPTY;
  /** Bumped by every `reset`; a probe is hashed for the current key when its stamp equals it. */
  private generation = 1;
  private readonly policies: FilterPolicy[] = [];
  private readonly probes: FilterProbe[] = [];
  private readonly stamps: number[] = [];

  /** Starts a lookup of `userKey` (borrowed until the next reset). Hashes nothing yet. */
  reset(userKey: Uint8Array): void {
    this.userKey = userKey;
    // 2^53 resets are out of reach; wrapping would only need a full re-stamp.
    this.generation++;
  }

  /** The key of the last `reset` (the empty key before any). */
  get key(): Uint8Array {
    return this.userKey;
  }

  /**
   * `policy`'s probe with the current key set: hashes the key for `policy` on the first call
   * since `reset`, returns the same probe without hashing afterwards. The probe is owned by this
   * KeyProbes: use it for `mayMatch` only, never `setKey` it.
   */
  probeFor(policy: FilterPolicy): FilterProbe {
    const policies = this.policies;
    let i = 0;
    while (i < policies.length && policies[i] !== policy) i++;
    if (i === policies.length) {
      policies.push(policy);
      this.probes.push(policy.newProbe());
      this.stamps.push(0);
    }
    const probe = this.probes[i]!;
    if (this.stamps[i] !== this.generation) {
      probe.setKey(this.userKey);
      this.stamps[i] = this.generation;
    }
    return probe;
  }
}
