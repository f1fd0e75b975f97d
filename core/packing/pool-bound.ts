// A lower bound that knows NodePool weights and limits (issue 14 finding 3), for the bench
// and tests. bound.ts and configuration-bound.ts let every pod open a node in whichever
// pool is cheapest; Karpenter (and autonode) open a node in a pool only for a pod that no
// heavier pool can take, and a limited pool takes nodes only while its limits allow.
//
// The semantics bounded. A plan places every pod on a node of some pool whose type and
// offerings admit it (pool requirements, taints, node selectors and affinity under the
// pod's loosest spec, as configuration-bound.ts's requirements model). A pod may join any
// node that admits it (Karpenter fills in-flight claims before it makes new ones), but
// each node was *opened* by one of its pods, its opener, and:
//   (W) when the opener p opened a node in pool P, every pool Q heavier than P that admits
//       p was exhausted for p: no type of Q that admits p fitted Q's remaining limits, or
//       Q's node limit was used up;
//   (L) each pool's nodes stay within its limits.
// What "remaining" counts matters. Karpenter's scheduler (karpenter.md, Solve) and
// autonode (claim.ts reservations) charge a planned claim the *largest* capacity among its
// instance-type options, and that reservation shrinks as pods narrow the options: a pool
// can be exhausted while its launched nodes' capacities sum to far less than its limit. So
// by default the only usage known from exhaustion is that the pool has a node (it admitted
// the opener when empty), or, for a pool limited in node count only, that its node count
// reached the limit (counts never shrink). With `limitsCountLaunched` (limits charged at
// the launched type's capacity, usage only growing) a pool Q limited in one resource r
// exhausted for p ends with  used_Q,r > headroom_Q,r − m_Q(p) ≥ headroom_Q,r − Δ_Q,  m_Q(p)
// the least capacity in r among Q's types admitting p, Δ_Q the largest m_Q over the exact
// pods Q admits. (L) holds in both: reservations never exceed the limits and a launched
// node's capacity is at most its reservation. Topology rules, host ports and zones are
// ignored (dropping constraints only lowers the optimum); existing nodes and in-flight
// claims are declined (the function returns undefined).
//
// Which pods (W) is applied to. A pod's admitted types are computed under its loosest spec
// (configuration-bound.ts relaxedSpecs), a superset of where a planner may open a node for
// it at a given moment, so (W) is used only for *exact* pods (poolItemModel: nothing to
// relax, no topology rule or host port that could make a planner pass over a heavier pool
// that admits them). Any other pod counts as able to open a node in any pool admitting it
// (fewer constraints: the LP only gets lower).
//
// The relaxation. Take any such plan and let S be the set of limited pools Q for which
// some node of a lighter pool has an exact opener that Q admits (by (W), Q was exhausted
// for it), and give each Q in S the usage row above. Every node of a pool P has an opener
// that is *eligible* for P under S: admitted by P, and either not exact or every heavier
// pool admitting it is in S (a heavier pool not in S blocked no opener of a lighter node,
// by the definition of S; an unlimited pool is never exhausted). So P has at most as many
// nodes as pods eligible for it, and none if there is none. The plan is then an integer
// solution of the LP below for its S; the LP's value is ≤ the plan's cost, and the bound —
// the minimum over every S — is ≤ the cost of every plan, the optimum included.
//
// The LP for one S (an assignment LP, LB2 of bound.ts in primal form, per pool type):
//   min Σ_t c_t·x_t  s.t.  Σ_t y_g,t = n_g  (g: pods by request vector and admitted pool
//   types; y only where t admits g and g's requests fit t),  Σ_g R_g,r·y_g,t ≤ A_t,r·x_t,
//   Σ_{t∈P} x_t ≤ eligible openers of P (and ≤ P's node headroom),
//   Σ_{t∈P} cap_t,r·x_t ≤ headroom_P,r  (L),  and per Q ∈ S its usage row (Σ_{t∈Q} x_t ≥ 1,
//   ≥ the node headroom, or Σ_{t∈Q} cap_t,r·x_t ≥ headroom_Q,r − Δ_Q),
// A_t the type's allocatable less the DaemonSets it runs in the pool, c_t the cheapest
// offering the pool allows. A type dominated within its pool (another admits every pod
// it admits, has at least its room, costs no more and counts the same against the pool's
// limits) is dropped: any LP solution moves its nodes and pods there at no higher cost.
// Each A_t is first rounded down to the gcd of the requests of the pods t admits (LB3,
// bound.ts roundCapacities: any node's load is a sum of those requests), before dominance.
// The LP value is scaled by (1 − 1e-7) for the solver's tolerances. Each LP also has slack
// columns at a large penalty (a pod unplaced, a usage row short): they only lower its
// minimum, so the bound stays valid, and every case stays feasible; a case the solver does
// not solve to optimality counts as 0.
import { gcd, type Vec } from './dims';
import type { PackingInput } from './input';
import type { LinearSolver, LpColumn } from './linear-program';
import { poolItemModel } from './configuration-bound';
import type { Pool } from './pools';

export interface PoolBound {
  /** Never above the cost of any plan that places every pod under the semantics above. */
  readonly bound: number;
  /** The LP value per case: the limited pools assumed exhausted, and its LP value (penalties included). */
  readonly cases: readonly { readonly exhausted: readonly string[]; readonly value: number }[];
  readonly columns: number;
}

interface UsageRow {
  readonly dimension: number | 'nodes';
  readonly atLeast: number;
}

interface TypeEntry {
  readonly pool: Pool;
  readonly room: Vec;
  readonly capacity: Vec;
  readonly price: number;
  readonly admitted: readonly number[];
}

const maxCases = 16;
/** Cost per pod left unplaced (or per unit of a usage row left short) in a case's LP. */
const penalty = 1e6;

/** The weights- and limits-aware bound (see the file comment). */
export interface PoolBoundOptions {
  /**
   * Limits counted on the launched nodes' own capacity (the usage row of the file comment).
   * Off by default: Karpenter's scheduler, and autonode's, charge a planned claim the
   * *largest* capacity among its instance-type options, which shrinks later, so a pool can
   * be exhausted while its nodes' capacities sum to far less than its limit.
   */
  readonly limitsCountLaunched?: boolean;
}

export function poolBound(input: PackingInput, solver: LinearSolver, options: PoolBoundOptions = {}): PoolBound | undefined {
  if (input.existingNodes.length > 0 || input.inFlightClaims.length > 0) return undefined;
  const { dims, pools, poolTypes, items: allItems } = poolItemModel(input);
  // A pool's limited resource dimensions (a `nodes` limit is its node count, pools.ts nodesHeadroom, not a resource).
  const limitedOf = (pool: Pool): readonly number[] => pool.limited.filter((r) => dims.names[r] !== 'nodes');
  // Items no pool type admits stay unplaced in every plan: bound the others.
  const items = allItems.filter((item) => item.admitted.some((a) => a === 1));
  if (items.length === 0) return { bound: 0, cases: [], columns: 0 };
  const requested = dims.names.map((_, r) => items.some((item) => (item.requests[r] ?? 0) > 0));
  const fitsIn = (requests: Vec, room: Vec): boolean => requests.every((v, r) => v <= (room[r] ?? 0));
  // Entries per pool, dominated ones dropped.
  const entries: TypeEntry[] = [];
  for (const pool of pools) {
    const candidates: TypeEntry[] = [];
    poolTypes.forEach(({ pool: owner, type }, t) => {
      if (owner !== pool) return;
      const room = type.allocatable.map((a, r) => a - (type.daemonOverhead[r] ?? 0));
      const admitted: number[] = [];
      items.forEach((item, g) => { if (item.admitted[t] === 1 && fitsIn(item.requests, room)) admitted.push(g); });
      if (admitted.length === 0) return;
      // LB3's integer rounding (bound.ts roundCapacities): a node's load is a sum of the
      // requests of pods it admits, so its room rounds down to their gcd per dimension.
      const step = new Float64Array(room.length);
      for (const g of admitted) for (let r = 0; r < step.length; r++) step[r] = gcd(step[r] ?? 0, items[g]?.requests[r] ?? 0);
      const rounded = room.map((a, r) => {
        const unit = step[r] ?? 0;
        return unit > 0 && Number.isSafeInteger(a) && Number.isSafeInteger(unit) ? Math.floor(a / unit) * unit : a;
      });
      candidates.push({ pool, room: rounded, capacity: type.capacity, price: type.offerings[0]?.price ?? Infinity, admitted });
    });
    const admittedSets = candidates.map((c) => new Set(c.admitted));
    const dominates = (a: number, b: number): boolean => {
      const x = candidates[a];
      const y = candidates[b];
      if (x === undefined || y === undefined || x.price > y.price) return false;
      for (let r = 0; r < x.room.length; r++) if (requested[r] === true && (x.room[r] ?? 0) < (y.room[r] ?? 0)) return false;
      for (const r of limitedOf(pool)) if ((x.capacity[r] ?? 0) !== (y.capacity[r] ?? 0)) return false;
      const set = admittedSets[a];
      return set !== undefined && y.admitted.every((g) => set.has(g));
    };
    candidates.forEach((candidate, b) => {
      // Among mutually dominating (equal) entries keep the first.
      const dominated = candidates.some((_, a) => a !== b && dominates(a, b) && (a < b || !dominates(b, a)));
      if (!dominated) entries.push(candidate);
    });
  }
  // Which pools admit which items (a pool "admits" g when one of its types within its initial
  // headroom admits g: only such a pool could ever open a node for g).
  const withinHeadroom = (entry: TypeEntry): boolean => entry.pool.nodesHeadroom >= 1 && limitedOf(entry.pool).every((r) => (entry.capacity[r] ?? 0) <= (entry.pool.headroom[r] ?? 0));
  const admits = pools.map((pool) => {
    const set = new Uint8Array(items.length);
    for (const entry of entries) if (entry.pool === pool && withinHeadroom(entry)) for (const g of entry.admitted) set[g] = 1;
    return set;
  });
  const limitedPools = pools.filter((pool) => limitedOf(pool).length > 0 || Number.isFinite(pool.nodesHeadroom));
  // Past maxCases, the extra limited pools count as exhausted in every case with no usage row (weaker, valid).
  const enumerated = limitedPools.slice(0, Math.log2(maxCases));
  const alwaysIn = new Set(limitedPools.slice(enumerated.length));
  // Δ_Q per limited pool with a single limited dimension: the largest, over the items Q
  // admits, of the least capacity in that dimension among Q's types admitting the item.
  const usageRows = new Map<Pool, UsageRow[]>();
  for (const pool of enumerated) {
    const single = limitedOf(pool).length === 1 && !Number.isFinite(pool.nodesHeadroom) ? limitedOf(pool)[0] : limitedOf(pool).length === 0 ? 'nodes' as const : undefined;
    // A node count never shrinks: exhausted by it means as many nodes as the headroom.
    if (single === 'nodes') {
      usageRows.set(pool, [{ dimension: 'nodes', atLeast: pool.nodesHeadroom }]);
      continue;
    }
    // Exhausted in any way: at least one node of the pool (it admitted the opener when empty).
    usageRows.set(pool, [{ dimension: 'nodes', atLeast: 1 }]);
    if (single === undefined || options.limitsCountLaunched !== true) continue;
    // Over every type of the pool (dominated ones too: they count for exhaustion).
    let delta = 0;
    items.forEach((item, g) => {
      if (!item.exact || admits[pool.order]?.[g] !== 1) return;
      let least = Infinity;
      poolTypes.forEach(({ pool: owner, type }, t) => {
        if (owner !== pool || item.admitted[t] !== 1) return;
        const room = type.allocatable.map((a, r) => a - (type.daemonOverhead[r] ?? 0));
        if (!fitsIn(item.requests, room) || (type.capacity[single] ?? 0) > (pool.headroom[single] ?? 0)) return;
        least = Math.min(least, type.capacity[single] ?? 0);
      });
      if (Number.isFinite(least)) delta = Math.max(delta, least);
    });
    if ((pool.headroom[single] ?? 0) - delta > 0) usageRows.get(pool)?.push({ dimension: single, atLeast: (pool.headroom[single] ?? 0) - delta });
  }
  // What a pool's nodes can reach: every node holds a pod, so at most one node per pod, each
  // at most the pool's largest capacity. A limit at or above that never binds (its row is
  // dropped: a relaxation), and a case asking a pool for more usage than that is no plan's.
  const podCount = input.pods.length;
  const reach = (pool: Pool, dimension: number | 'nodes'): number => {
    if (dimension === 'nodes') return podCount;
    let largest = 0;
    for (const { pool: owner, type } of poolTypes) if (owner === pool) largest = Math.max(largest, type.capacity[dimension] ?? 0);
    return podCount * largest;
  };
  const binding = (pool: Pool): readonly number[] => limitedOf(pool).filter((r) => (pool.headroom[r] ?? 0) < reach(pool, r));
  const cases: { exhausted: string[]; value: number }[] = [];
  let columns = 0;
  for (let mask = 0; mask < 2 ** enumerated.length; mask++) {
    const exhausted = new Set<Pool>(alwaysIn);
    enumerated.forEach((pool, i) => { if ((mask & (1 << i)) !== 0) exhausted.add(pool); });
    const impossible = [...exhausted].some((pool) => {
      return (usageRows.get(pool) ?? []).some((usage) => usage.atLeast > reach(pool, usage.dimension));
    });
    if (impossible) {
      cases.push({ exhausted: [...exhausted].map((pool) => pool.name).sort(), value: Infinity });
      continue;
    }
    // Eligible openers per pool: admitted, and every heavier pool admitting them is in S.
    const openers = pools.map((pool) => {
      let count = 0;
      items.forEach((item, g) => {
        if (admits[pool.order]?.[g] !== 1) return;
        const blocked = item.exact && pools.some((q) => q.weight > pool.weight && admits[q.order]?.[g] === 1 && !exhausted.has(q));
        if (!blocked) count += item.count;
      });
      return count;
    });
    const result = solveCase(items, entries, pools, binding, openers, exhausted, usageRows, solver, requested);
    columns = Math.max(columns, result.columns);
    cases.push({ exhausted: [...exhausted].map((pool) => pool.name).sort(), value: result.value });
  }
  const best = Math.min(...cases.map((c) => c.value));
  return { bound: best * (1 - 1e-7), cases, columns };
}

function solveCase(
  items: readonly { readonly requests: Vec; readonly count: number }[],
  entries: readonly TypeEntry[],
  pools: readonly Pool[],
  limitedOf: (pool: Pool) => readonly number[],
  openers: readonly number[],
  exhausted: ReadonlySet<Pool>,
  usageRows: ReadonlyMap<Pool, readonly UsageRow[]>,
  solver: LinearSolver,
  requested: readonly boolean[],
): { value: number; columns: number } {
  const usable = entries.filter((entry) => (openers[entry.pool.order] ?? 0) > 0);
  const model = solver.createModel();
  try {
    const inf = solver.infinity;
    let rows = 0;
    const row = (lower: number, upper: number): number => { model.addRow(lower, upper); return rows++; };
    const itemRows = items.map((item) => row(item.count, item.count));
    const dimensions = requested.flatMap((on, r) => (on ? [r] : []));
    // Limit and usage rows are scaled by the largest capacity in their dimension (bytes reach
    // 1e12; the same LP, better conditioned). Scaling the capacity rows too made HiGHS 2.5×
    // slower on many-pools.
    const capScale = (r: number): number => Math.max(1, ...entries.map((entry) => entry.capacity[r] ?? 0));
    const capacityRows = usable.map(() => dimensions.map(() => row(-inf, 0)));
    // Per pool: node count (openers and node headroom), limits, and the usage row in S.
    const poolRows = pools.map((pool) => {
      const nodes = Math.min(openers[pool.order] ?? 0, pool.nodesHeadroom);
      const nodeRow = row(-inf, nodes);
      const limitRows = limitedOf(pool).map((r) => ({ r, scale: capScale(r), row: row(-inf, (pool.headroom[r] ?? 0) / capScale(r)) }));
      const usage = (exhausted.has(pool) ? usageRows.get(pool) ?? [] : []).map((row) => ({ ...row, scale: row.dimension === 'nodes' ? 1 : capScale(row.dimension) }));
      const usageIndices = usage.map((u) => row(u.atLeast / u.scale, inf));
      return { nodeRow, limitRows, usage, usageIndices };
    });
    let columns = 0;
    const add = (column: LpColumn): void => { model.addColumn(column); columns++; };
    usable.forEach((entry, e) => {
      const own = poolRows[entry.pool.order];
      const rowsOf: number[] = [];
      const values: number[] = [];
      dimensions.forEach((r, j) => { rowsOf.push(capacityRows[e]?.[j] ?? 0); values.push(-(entry.room[r] ?? 0)); });
      if (own !== undefined) {
        rowsOf.push(own.nodeRow); values.push(1);
        for (const limit of own.limitRows) { rowsOf.push(limit.row); values.push((entry.capacity[limit.r] ?? 0) / limit.scale); }
        own.usage.forEach((u, i) => {
          rowsOf.push(own.usageIndices[i] ?? 0);
          values.push(u.dimension === 'nodes' ? 1 : (entry.capacity[u.dimension] ?? 0) / u.scale);
        });
      }
      add({ cost: entry.price, lower: 0, upper: inf, rows: rowsOf, values });
      for (const g of entry.admitted) {
        const item = items[g];
        if (item === undefined) continue;
        const yRows = [itemRows[g] ?? 0];
        const yValues = [1];
        dimensions.forEach((r, j) => {
          const v = item.requests[r] ?? 0;
          if (v !== 0) { yRows.push(capacityRows[e]?.[j] ?? 0); yValues.push(v); }
        });
        add({ cost: 0, lower: 0, upper: inf, rows: yRows, values: yValues });
      }
    });
    // Slack at a penalty keeps every case feasible (a solver failure is then never read as
    // infeasibility): extra columns only lower the LP's minimum, so validity does not
    // depend on the penalty, only the strength does.
    itemRows.forEach((index) => add({ cost: penalty, lower: 0, upper: inf, rows: [index], values: [1] }));
    for (const own of poolRows) for (const index of own.usageIndices) add({ cost: penalty, lower: 0, upper: inf, rows: [index], values: [1] });
    const result = model.solve();
    // Not solved to optimality: no claim about this case beyond 0.
    return { value: result.optimal ? Math.max(0, result.objective) : 0, columns };
  } finally {
    model.dispose();
  }
}
