/**
 * Filter policies across threads: a worker cannot receive a policy object (it has code), so the
 * built-in policies travel as a spec and are rebuilt on the other side. A policy with no spec (a
 * user's own class) cannot go to a worker: the database then runs its background work inline.
 */
import { BloomFilterPolicy } from '../filter/bloom.js';
import type { FilterPolicy } from '../filter/policy.js';
import { RibbonFilterPolicy } from '../filter/ribbon.js';
import { BlockedBloomFilterPolicy } from '../filter/blocked-bloom.js';

export type PolicySpec =
  | { readonly kind: 'none' }
  | { readonly kind: 'bloom'; readonly bitsPerKey: number; readonly hashCount: number }
  | { readonly kind: 'ribbon'; readonly bitsPerKey: number }
  | { readonly kind: 'blocked-bloom'; readonly bitsPerKey: number };

/**
 * The filter a job builds with: a spec (crosses to a worker), or — for jobs run on the database's
 * thread only — the policy object itself (a user's own policy has no spec).
 */
export type FilterChoice = PolicySpec | { readonly kind: 'object'; readonly policy: FilterPolicy };

/** The choice for `policy`: its spec if it has one, else the object (inline jobs only). */
export function filterChoice(policy: FilterPolicy | null): FilterChoice {
  return policySpec(policy) ?? { kind: 'object', policy: policy! };
}

/** The spec of `policy`, or undefined if it is not a built-in policy. */
export function policySpec(policy: FilterPolicy | null): PolicySpec | undefined {
  if (policy === null) return { kind: 'none' };
  if (policy instanceof BloomFilterPolicy) return { kind: 'bloom', bitsPerKey: policy.bitsPerKey, hashCount: policy.hashCount };
  if (policy instanceof RibbonFilterPolicy) return { kind: 'ribbon', bitsPerKey: policy.bitsPerKey };
  if (policy instanceof BlockedBloomFilterPolicy) return { kind: 'blocked-bloom', bitsPerKey: policy.bitsPerKey };
  return undefined;
}

export function policyFromSpec(spec: FilterChoice): FilterPolicy | null {
  switch (spec.kind) {
    case 'object':
      return spec.policy;
    case 'none':
      return null;
    case 'bloom':
      return new BloomFilterPolicy(spec.bitsPerKey, spec.hashCount);
    case 'ribbon':
      return new RibbonFilterPolicy(spec.bitsPerKey);
    case 'blocked-bloom':
      return new BlockedBloomFilterPolicy(spec.bitsPerKey);
  }
}
