/**
 * The routers sievekv ships, found again from the name a sharded database's REGIONS file holds:
 * what tools (repair, the CLI) use to open a sharded database without the program that made it.
 */
import { DezhouRegionRouter } from './dezhou-router.js';
import { JumpRouter } from './jump-router.js';
import type { RegionRouter } from './region-router.js';

/** The built-in router named `name` (DezhouKV's, or `sievekv.jump(N)`), or undefined. */
export function builtInRouter(name: string): RegionRouter | undefined {
  const dezhou = new DezhouRegionRouter();
  if (name === dezhou.name) return dezhou;
  const m = /^sievekv\.jump\((\d+)\)$/.exec(name);
  return m === null ? undefined : new JumpRouter(Number(m[1]));
}
