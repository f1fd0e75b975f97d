// Column generation over node patterns (Gilmore–Gomory), shared by the configuration-LP
// lower bound (configuration-bound.ts, exact pricing) and the solver's LP guide
// (guide.ts, fast pricing plus sequential rounding).
//
//   master:  min Σ_p c_p·x_p  s.t.  Σ_p a_k,p·x_p ≥ n_k for every item k,  x ≥ 0
//
// A pattern p is a type t and how many of each item one node of t holds: integers that
// fit its capacity, a_k ≤ n_k, only items allowed on t. Given the master's duals π ≥ 0,
// the best pattern on a type solves a bounded integer knapsack max Σ π_k·a_k. Pricing:
//  - a 2-D dynamic program over the dimensions that can bind (exact), when its grid is small;
//  - a branch and bound pruned by the knapsack's LP relaxation (exact when it finishes);
//  - the LP relaxation itself, an upper bound only (exact mode, for Farley's bound), and at
//    the last round a tighter one for the types a search could not finish: Lagrangian
//    relaxation with one dimension kept integer (lagrangianUpper);
//  - a greedy fill by dual value per unit of capacity (fast mode, large types).
// Farley's bound: if ρ ≥ max over types and patterns of π·a / c_t, then π/ρ is feasible
// for the full master's dual and Σ n_k·π_k / ρ is a lower bound on its LP value.
// With openers (the rider pass, guide-riders.ts) every pattern also names the item whose
// pod opens its node, and a row per item caps the nodes it opens: Σ_{p names k} x_p ≤ o_k.
import { gcd, lessOrEqual as fits, type Vec } from './dims';
import type { LinearSolver, LpModel } from './linear-program';

export interface PatternProblem {
  /** Exact integer requests per dimension (bytes, milli-units) and how many of each item. */
  readonly items: readonly { readonly requests: Vec; readonly count: number }[];
  /** Usable capacity (same dimensions) and price of one node of each type. */
  readonly types: readonly { readonly capacity: Vec; readonly price: number }[];
  /** Whether item k may go on type t besides fitting; everything fitting is allowed if absent. */
  readonly allowed?: (item: number, type: number) => boolean;
  /** Per-node rules between items (topology), honoured by every pattern generated. */
  readonly rules?: readonly PatternRule[];
  /**
   * Per item, how many of its pods may open a node (guide-riders.ts: a lighter pool's
   * natives). When given, every pattern names an *opener* item it holds, at most this many
   * nodes name item k (a row per item with openers), and rounding keeps both: every node
   * returned has an opener. Patterns no opener can open are priced at noOpenerCost × their
   * price and never rounded into nodes (their pods are left over).
   */
  readonly openers?: readonly number[];
}

/**
 * (Not used by solve() yet: the guide leaves pods with topology rules to the greedy fill,
 * guide.ts says why; kept for a topology-aware configuration bound, issue 14 finding 3.)
 * "A node holding any of `owners` holds at most `cap` pods of `matchers`" (owners may be
 * matchers too): hostname anti-affinity (cap 1 when the owner matches its own selector, 0
 * when not) and hostname spread (cap maxSkew) on a node, as topology.ts enforces them.
 * Every column generated or offered satisfies every rule (repairRules); pricing bounds
 * (the knapsack's relaxations, the unconstrained dynamic program) ignore them, which
 * only makes them larger: Farley's bound stays valid.
 */
export interface PatternRule {
  readonly owners: readonly number[];
  readonly matchers: readonly number[];
  readonly cap: number;
}

export interface Pattern {
  readonly type: number;
  /** Per item of the problem. */
  readonly counts: Int32Array;
  /** With openers (PatternProblem.openers): the item one of whose pods opens the node, -1 for none. */
  readonly opener?: number;
}

export interface GenerationResult {
  /** Farley's bound from the last exact pricing round (0 if none ran): ≤ the master's LP value. */
  readonly bound: number;
  /** The restricted master's last LP value (the configuration LP's when converged). */
  readonly lp: number;
  readonly converged: boolean;
  readonly iterations: number;
  readonly columns: number;
}

export interface GenerationOptions {
  /** 'exact' prices every type exactly where affordable (bounds); 'fast' prices cheaply (the solver). */
  readonly mode: 'exact' | 'fast';
  readonly maxIterations: number;
  /** Largest grid for the exact dynamic program of the exact round ('exact' only). */
  readonly dpBudget: number;
  /** Grid × pieces for the dynamic program of the cheap round; larger types are priced greedily. */
  readonly fastBudget: number;
  /** Branch-and-bound nodes per type and round ('exact'). */
  readonly searchNodes: number;
  /**
   * Cheap-round pricing work (dynamic-program cells plus item steps) after which
   * generation stops where it is: a deterministic stand-in for a time limit.
   */
  readonly workBudget?: number;
  /**
   * round() stops once this share of the demand is left (0: never), for the caller's own
   * packer: the last nodes of sequential rounding cost an LP solve each.
   */
  readonly leaveToGreedy?: number;
  /** Cover what leaveToGreedy leaves with the LP's patterns rounded up, in one solve (coverTail). */
  readonly coverTail?: boolean;
}

/** A cap on the nodes rounding may take (a pool's limits): checked, then charged, per node, by problem type. */
export interface RoundLimit {
  fits(type: number): boolean;
  take(type: number): void;
}

const improving = 1 + 1e-9;
/** Types kept for rounding besides those the LP uses (narrowPricing). */
const narrowExtra = 12;
/** Partial pricing: the hottest types every iteration, every type every this many. */
const hotTypes = 24;
const fullScanEvery = 4;
/** During rounding, new patterns once this share of the demand is left since the last pricing. */
const repriceAfter = 0.9;
/** Grid states of one cheap-round dynamic program. */
const maxFastStates = 100_000;
/**
 * The price factor of a column no opener can open (PatternProblem.openers): its pods are
 * left to the caller's own packer, which pays more than the LP's nodes for them.
 */
const noOpenerCost = 2;
/** With openers, pricing also tries patterns built around each of this many best openers. */
const forcedOpeners = 2;

interface Items {
  readonly k: number[];
  readonly ub: number[];
}

interface Priced {
  /** Upper bound on max π·a over the type's patterns. */
  readonly upper: number;
  /** Best pattern found and its value. */
  readonly value: number;
  readonly pattern: Int32Array | undefined;
  /** With openers: the pattern's opener item (its value is net of that item's opener penalty). */
  readonly opener?: number;
}

export class PatternGenerator {
  /** Requests and capacities in whole multiples of each dimension's gcd of requests. */
  private readonly r: Float64Array[];
  private readonly a: Float64Array[];
  private readonly price: number[];
  private readonly count: number[];
  /** allowed[t][k] */
  private readonly allowed: Uint8Array[];
  /** Problem type index of each kept type. */
  private readonly typeIndex: number[];
  /** Kept index of each kept problem type. */
  private readonly keptIndex: Map<number, number>;
  /** Known patterns already offered (addKnownPattern), by problem type and counts. */
  private readonly known = new Set<string>();
  private readonly master: LpModel;
  private readonly patterns: Pattern[] = [];
  private readonly seen = new Set<string>();
  private demand: number[];
  private orders: number[][] | undefined;
  private orderDuals: Float64Array | undefined;
  /** Pricing work done so far (dynamic-program cells, item steps), against options.workBudget. */
  private work = 0;
  /** Types priced by generate(); round() narrows it to the types that matter. */
  private pricing: number[];
  /** Per type, the best pattern's value per price at its last pricing. */
  private readonly lastRatio: Float64Array;
  private readonly rules: readonly PatternRule[];
  /** Per item, the rules it owns or matches (indices into rules). */
  private readonly rulesOf: number[][];
  /** Per item, copies of it one node may hold under the rules alone (an owner that matches its own rule). */
  private readonly ruleCap: number[];
  /** Scratch buffers of the dynamic program (scratchGrid, scratchTrace). */
  private grid = new Float64Array(0);
  private trace = new Uint8Array(0);
  /** With openers: per item, its opener row in the master (-1: its pods open no node). */
  private readonly openerRow: Int32Array | undefined;
  /** With openers: per item, nodes it may still open (rounding charges them). */
  private readonly openersLeft: number[];

  constructor(problem: PatternProblem, private readonly solver: LinearSolver, private readonly options: GenerationOptions) {
    const d = problem.items[0]?.requests.length ?? 0;
    const dims: number[] = [];
    const steps: number[] = [];
    for (let r = 0; r < d; r++) {
      let g = 0;
      for (const item of problem.items) g = gcd(g, item.requests[r] ?? 0);
      if (g > 0 && problem.items.every((item) => Number.isSafeInteger(item.requests[r] ?? 0))) {
        dims.push(r);
        steps.push(g);
      }
    }
    // Capacities round down to whole steps: no integer packing of these items notices.
    this.r = problem.items.map((item) => Float64Array.from(dims, (r, i) => (item.requests[r] ?? 0) / (steps[i] ?? 1)));
    const a = problem.types.map((type) => Float64Array.from(dims, (r, i) => Math.floor((type.capacity[r] ?? 0) / (steps[i] ?? 1))));
    this.count = problem.items.map((item) => item.count);
    this.demand = [...this.count];
    // (plain loops: Uint8Array.from with a map function was most of the constructor's time,
    // types × items calls: aws-realistic 20k about 700 × 387)
    const allow = problem.types.map((_, t) => {
      const row = new Uint8Array(problem.items.length);
      const capacity = a[t] ?? new Float64Array(0);
      for (let k = 0; k < row.length; k++) if (fits(this.r[k] ?? new Float64Array(0), capacity) && (problem.allowed?.(k, t) ?? true)) row[k] = 1;
      return row;
    });
    const useful = allow.map((row) => row.includes(1));
    // A type no dearer and at least as large everywhere, allowed for every item the other
    // is, hosts all of the other's patterns: the other adds nothing.
    const dominated = (t: number): boolean => problem.types.some((u, j) => {
      const tt = problem.types[t];
      if (j === t || !useful[j] || tt === undefined || u.price > tt.price || !fits(a[t] ?? new Float64Array(0), a[j] ?? new Float64Array(0))) return false;
      const at = allow[t] ?? new Uint8Array(0);
      const au = allow[j] ?? new Uint8Array(0);
      for (let k = 0; k < at.length; k++) if (at[k] === 1 && au[k] !== 1) return false;
      const equal = u.price === tt.price && fits(a[j] ?? new Float64Array(0), a[t] ?? new Float64Array(0)) && at.every((v, k) => v === au[k]);
      return !equal || j < t;
    });
    this.typeIndex = problem.types.map((_, t) => t).filter((t) => useful[t] === true && !dominated(t));
    this.keptIndex = new Map(this.typeIndex.map((t, kept) => [t, kept]));
    this.a = this.typeIndex.map((t) => a[t] ?? new Float64Array(0));
    this.price = this.typeIndex.map((t) => problem.types[t]?.price ?? 0);
    this.allowed = this.typeIndex.map((t) => allow[t] ?? new Uint8Array(0));
    this.pricing = this.a.map((_, t) => t);
    this.lastRatio = new Float64Array(this.a.length);
    this.rules = problem.rules ?? [];
    this.rulesOf = problem.items.map(() => []);
    this.ruleCap = problem.items.map(() => Infinity);
    this.rules.forEach((rule, i) => {
      for (const k of new Set([...rule.owners, ...rule.matchers])) this.rulesOf[k]?.push(i);
      for (const k of rule.owners) if (rule.matchers.includes(k)) this.ruleCap[k] = Math.min(this.ruleCap[k] ?? Infinity, rule.cap);
    });
    this.master = solver.createModel();
    this.count.forEach((n) => this.master.addRow(n, solver.infinity));
    this.openersLeft = problem.items.map((_, k) => Math.min(problem.openers?.[k] ?? 0, this.count[k] ?? 0));
    if (problem.openers === undefined) this.openerRow = undefined;
    else {
      const rows = new Int32Array(problem.items.length).fill(-1);
      let row = problem.items.length;
      this.openersLeft.forEach((n, k) => {
        if (n <= 0) return;
        rows[k] = row++;
        this.master.addRow(-solver.infinity, n);
      });
      this.openerRow = rows;
    }
    this.seedColumns();
  }

  dispose(): void {
    this.master.dispose();
  }

  /** Types left after dropping the useless and the dominated. */
  get typeCount(): number {
    return this.a.length;
  }

  /** Items some kept type can hold (the others can never be placed). */
  placeable(k: number): boolean {
    return this.allowed.some((row) => row[k] === 1);
  }

  private copiesOn(k: number, t: number, limit: number): number {
    const r = this.r[k];
    const a = this.a[t];
    if (r === undefined || a === undefined || this.allowed[t]?.[k] !== 1) return 0;
    let copies = Math.min(limit, this.ruleCap[k] ?? Infinity);
    for (let i = 0; i < a.length; i++) if ((r[i] ?? 0) > 0) copies = Math.min(copies, Math.floor((a[i] ?? 0) / (r[i] ?? 1)));
    return Math.max(0, copies);
  }

  /**
   * The pattern trimmed until it keeps every rule: per broken rule, either its owners go
   * or its matchers are cut to the cap (the most valuable kept), whichever keeps more
   * value (π, or pod counts without duals). Only removes pods, so the pattern still fits
   * and a rule kept stays kept: one pass suffices. Mutates and returns `counts`.
   */
  private repairRules(counts: Int32Array, pi?: Float64Array): Int32Array {
    const worth = (k: number): number => (pi === undefined ? 1 : Math.max(1e-12, pi[k] ?? 0));
    for (const rule of this.rules) {
      let owners = 0;
      for (const k of rule.owners) owners += counts[k] ?? 0;
      if (owners === 0) continue;
      let matching = 0;
      for (const k of rule.matchers) matching += counts[k] ?? 0;
      if (matching <= rule.cap) continue;
      // Option A: drop the owners (the matchers stay).
      let lossA = 0;
      for (const k of rule.owners) lossA += (counts[k] ?? 0) * worth(k);
      // Option B: keep the cap's most valuable matchers (owners that do not match stay).
      const byWorth = [...rule.matchers].filter((k) => (counts[k] ?? 0) > 0).sort((x, y) => worth(y) - worth(x) || x - y);
      let keep = rule.cap;
      let lossB = 0;
      const kept = new Map<number, number>();
      for (const k of byWorth) {
        const c = Math.min(counts[k] ?? 0, keep);
        keep -= c;
        kept.set(k, c);
        lossB += ((counts[k] ?? 0) - c) * worth(k);
      }
      if (lossA <= lossB) for (const k of rule.owners) counts[k] = 0;
      else for (const [k, c] of kept) counts[k] = c;
    }
    return counts;
  }

  /** Copies of item k (on top of `counts`) the rules allow on one node. */
  private ruleRoom(k: number, counts: ArrayLike<number>): number {
    let room = Infinity;
    for (const i of this.rulesOf[k] ?? []) {
      const rule = this.rules[i];
      if (rule === undefined) continue;
      let owners = 0;
      for (const o of rule.owners) owners += counts[o] ?? 0;
      let matching = 0;
      for (const m of rule.matchers) matching += counts[m] ?? 0;
      const isOwner = rule.owners.includes(k);
      const isMatcher = rule.matchers.includes(k);
      if (isOwner && !isMatcher && matching > rule.cap) return 0;
      if (isMatcher && (owners > 0 || isOwner)) room = Math.min(room, rule.cap - matching);
    }
    return Math.max(0, room);
  }

  /**
   * Adds the pattern as a column. With openers: `opener` names its opener item (undefined:
   * the one it holds with the most openers left; -1, or an item it cannot open with: none,
   * a no-opener column).
   */
  private addColumn(t: number, counts: Int32Array, opener?: number): boolean {
    if (this.rules.length > 0) this.repairRules(counts);
    const rows: number[] = [];
    const values: number[] = [];
    counts.forEach((c, k) => { if (c > 0) { rows.push(k); values.push(c); } });
    let cost = this.price[t] ?? 0;
    let named = -1;
    if (this.openerRow !== undefined) {
      if (opener === undefined) named = this.openerIn(counts);
      else if (opener >= 0 && (counts[opener] ?? 0) > 0 && (this.openerRow[opener] ?? -1) >= 0) named = opener;
      if (named < 0) cost *= noOpenerCost;
      else { rows.push(this.openerRow[named] ?? 0); values.push(1); }
    }
    const key = `${t}:${named}:${counts.join(',')}`;
    if (this.seen.has(key) || counts.every((c) => c === 0)) return false;
    this.seen.add(key);
    this.master.addColumn({ cost, lower: 0, upper: this.solver.infinity, rows, values });
    this.patterns.push(this.openerRow === undefined ? { type: t, counts } : { type: t, counts, opener: named });
    return true;
  }

  /** The item of `counts` with openers that has the most left (-1: none); ties to the lower index. */
  private openerIn(counts: ArrayLike<number>, penalty?: (k: number) => number): number {
    let best = -1;
    for (let k = 0; k < counts.length; k++) {
      if ((counts[k] ?? 0) <= 0 || (this.openerRow?.[k] ?? -1) < 0 || (this.openersLeft[k] ?? 0) <= 0) continue;
      const better = best < 0 || (penalty !== undefined && penalty(k) < penalty(best))
        || ((penalty === undefined || penalty(k) === penalty(best)) && (this.openersLeft[k] ?? 0) > (this.openersLeft[best] ?? 0));
      if (better) best = k;
    }
    return best;
  }

  /**
   * A known node (e.g. from the greedy plan) as a column: on its own type if that was
   * kept, else on the cheapest kept type that holds it. Returns whether it was added.
   * With openers, `opener` is the item of the pod that opened it (addColumn).
   */
  addKnownPattern(problemType: number, counts: Int32Array, opener?: number): boolean {
    // Many known nodes are alike (a greedy plan's): one look each.
    const key = `${problemType}:${opener ?? ''}:${counts.join(',')}`;
    if (this.known.has(key)) return false;
    this.known.add(key);
    const load = new Float64Array(this.r[0]?.length ?? 0);
    counts.forEach((c, k) => { for (let i = 0; i < load.length; i++) load[i] = (load[i] ?? 0) + c * (this.r[k]?.[i] ?? 0); });
    const holds = (t: number): boolean => fits(load, this.a[t] ?? new Float64Array(0)) && counts.every((c, k) => c === 0 || this.allowed[t]?.[k] === 1);
    let t = this.keptIndex.get(problemType) ?? -1;
    if (t < 0 || !holds(t)) {
      t = -1;
      for (let u = 0; u < this.a.length; u++) if (holds(u) && (t < 0 || (this.price[u] ?? 0) < (this.price[t] ?? 0))) t = u;
    }
    if (t < 0) return false;
    const trimmed = Int32Array.from(counts, (c, k) => Math.min(c, this.count[k] ?? 0));
    if (this.openerRow === undefined || opener !== undefined) return this.addColumn(t, trimmed, opener);
    // With openers and none named: one column per item that could open it, the master picks.
    let added = false;
    trimmed.forEach((c, k) => { if (c > 0 && (this.openerRow?.[k] ?? -1) >= 0 && this.addColumn(t, trimmed.slice(), k)) added = true; });
    return added;
  }

  /** Every placeable item alone on the type that holds it at the least cost per item. */
  private seedColumns(): void {
    const K = this.count.length;
    const seeds: { k: number; t: number; copies: number }[] = [];
    for (let k = 0; k < K; k++) {
      let best = -1;
      let bestCost = Infinity;
      let bestCopies = 0;
      for (let t = 0; t < this.a.length; t++) {
        const copies = this.copiesOn(k, t, this.count[k] ?? 0);
        if (copies > 0 && (this.price[t] ?? 0) / copies < bestCost) {
          bestCost = (this.price[t] ?? 0) / copies;
          best = t;
          bestCopies = copies;
        }
      }
      if (best < 0) {
        // Nothing holds it: a free artificial column keeps the master feasible.
        this.master.addColumn({ cost: 0, lower: 0, upper: this.solver.infinity, rows: [k], values: [1] });
        this.patterns.push({ type: -1, counts: new Int32Array(K) });
        continue;
      }
      const counts = new Int32Array(K);
      counts[k] = bestCopies;
      this.addColumn(best, counts);
      // With openers, an item whose openers run out still has a column: the master stays feasible.
      if ((this.openerRow?.[k] ?? -1) >= 0) this.addColumn(best, counts.slice(), -1);
      seeds.push({ k, t: best, copies: bestCopies });
    }
    if (this.openerRow !== undefined) this.seedOpened(seeds);
  }

  /**
   * With openers, seed nodes an opener opens for every item, as a feasible start (the
   * singletons above are mostly no-opener columns): each item's nodes (its demand over the
   * copies its seed type holds) opened by its own openers first, then by others' left over,
   * each as the item beside one opener pod — the opener leaving room for the most copies,
   * then the smallest.
   */
  private seedOpened(seeds: readonly { k: number; t: number; copies: number }[]): void {
    const left = [...this.openersLeft];
    const need = seeds.map(({ k, copies }) => Math.ceil((this.count[k] ?? 0) / copies));
    seeds.forEach(({ k }, s) => {
      if ((this.openerRow?.[k] ?? -1) < 0) return;
      const own = Math.min(need[s] ?? 0, left[k] ?? 0);
      left[k] = (left[k] ?? 0) - own;
      need[s] = (need[s] ?? 0) - own;
    });
    seeds.forEach(({ k, t, copies }, s) => {
      const a = this.a[t] ?? new Float64Array(0);
      const r = this.r[k] ?? new Float64Array(0);
      while ((need[s] ?? 0) > 0) {
        let best = -1;
        let bestCopies = 0;
        let bestSize = Infinity;
        this.openerRow?.forEach((row, o) => {
          if (row < 0 || (left[o] ?? 0) <= 0 || this.allowed[t]?.[o] !== 1) return;
          const ro = this.r[o] ?? new Float64Array(0);
          let room = o === k ? copies - 1 : copies;
          let size = 0;
          for (let i = 0; i < a.length; i++) {
            const free = (a[i] ?? 0) - (ro[i] ?? 0);
            if (free < 0) room = -1;
            else if ((r[i] ?? 0) > 0) room = Math.min(room, Math.floor(free / (r[i] ?? 1)));
            size += (ro[i] ?? 0) / Math.max(1, a[i] ?? 0);
          }
          if (room > bestCopies || (room === bestCopies && room > 0 && size < bestSize)) {
            best = o;
            bestCopies = room;
            bestSize = size;
          }
        });
        if (best < 0) return;
        const nodes = Math.min(need[s] ?? 0, left[best] ?? 0);
        left[best] = (left[best] ?? 0) - nodes;
        need[s] = (need[s] ?? 0) - nodes;
        const counts = new Int32Array(this.count.length);
        counts[k] = bestCopies;
        counts[best] = (counts[best] ?? 0) + 1;
        this.addColumn(t, counts, best);
      }
    });
  }

  /** Column generation until no pattern improves or the iteration budget is spent. */
  generate(maxIterations = this.options.maxIterations, workLimit = this.options.workBudget ?? Infinity): GenerationResult {
    const { mode } = this.options;
    let bound = 0;
    let lp = Infinity;
    let converged = false;
    let iterations = 0;
    const K = this.count.length;
    let sinceFull = fullScanEvery;
    for (; iterations < maxIterations && !converged && this.work < workLimit; iterations++) {
      const result = this.master.solve();
      if (!result.optimal) break;
      lp = result.objective;
      const pi = Float64Array.from(result.rowDuals, (v) => Math.abs(v));
      let dualSum = 0;
      this.demand.forEach((n, k) => { dualSum += n * (pi[k] ?? 0); });
      // Partial pricing: between full scans, only the types whose patterns came closest
      // to paying off last time (most columns come from few types).
      const full = sinceFull >= fullScanEvery || this.pricing.length <= hotTypes;
      const scan = full ? this.pricing
        : [...this.pricing].sort((x, y) => (this.lastRatio[y] ?? 0) - (this.lastRatio[x] ?? 0) || x - y).slice(0, hotTypes);
      sinceFull = full ? 0 : sinceFull + 1;
      const found: { t: number; ratio: number; pattern: Int32Array; opener?: number }[] = [];
      for (const t of scan) {
        const priced = this.openerRow === undefined ? this.fastPrice(t, pi) : this.withOpener(t, pi, this.fastPrice(t, pi));
        const ratio = priced.value / (this.price[t] ?? 1);
        this.lastRatio[t] = Math.max(ratio, priced.upper === Infinity ? ratio : 0);
        if (ratio > improving && priced.pattern !== undefined) found.push({ t, ratio, pattern: priced.pattern, opener: priced.opener });
      }
      let added = 0;
      found.sort((x, y) => y.ratio - x.ratio || x.t - y.t);
      for (const column of found.slice(0, Math.max(20, K))) if (this.addColumn(column.t, column.pattern, column.opener)) added += 1;
      if (added > 0) continue;
      if (!full) {
        sinceFull = fullScanEvery;
        continue;
      }
      if (mode === 'fast') {
        converged = true;
        break;
      }
      // Exact round: types by their relaxation bound, until none can beat the best exact ratio.
      const order = this.a.map((_, t) => ({ t, upper: this.relaxation(t, pi, this.items(t, pi)).upper / (this.price[t] ?? 1) }))
        .sort((x, y) => y.upper - x.upper || x.t - y.t);
      let rho = 0;
      const exactly = new Map<number, { upper: number; exact: boolean; lambda?: Float64Array }>();
      for (const { t, upper } of order) {
        if (upper <= rho) break;
        const priced = this.exactPrice(t, pi);
        exactly.set(t, priced);
        const price = this.price[t] ?? 1;
        rho = Math.max(rho, priced.upper / price);
        if (priced.value / price > improving && priced.pattern !== undefined && this.addColumn(t, priced.pattern)) added += 1;
      }
      if (added === 0) {
        const tightened = this.tightenedRho(pi, order, exactly);
        rho = tightened.rho;
        added = tightened.added;
        converged = added === 0;
      }
      if (rho > 0) bound = Math.max(bound, dualSum / Math.max(1, rho));
    }
    return { bound, lp, converged, iterations, columns: this.patterns.length };
  }

  /**
   * Sequential rounding: solve the master for the demand left, take the whole copies of
   * every pattern (as many as the demand still needs), and when no pattern has a whole
   * copy, one copy of the largest; repeat until the demand is met. Patterns are trimmed
   * to the demand, so every node returned is full of pods that exist.
   */
  round(maxRounds: number, iterationsPerRound: number, roundWork = Infinity, limit?: RoundLimit): { nodes: Pattern[]; left: number[] } {
    const nodes: Pattern[] = [];
    const K = this.count.length;
    for (let k = 0; k < K; k++) if (!this.placeable(k)) this.demand[k] = 0;
    this.narrowPricing();
    const workLimit = this.work + roundWork;
    const total = (): number => this.demand.reduce((sum, n) => sum + n, 0);
    let pricedAt = total();
    const stopAt = (this.options.leaveToGreedy ?? 0) * total();
    for (let round = 0; round < maxRounds && total() > stopAt && this.demand.some((n) => n > 0); round++) {
      this.setResidualBounds();
      // Patterns for what is left (the first ones were shaped for the whole demand), once
      // a tenth of it has been placed since the last time.
      if (round > 0 && iterationsPerRound > 0 && total() <= repriceAfter * pricedAt) {
        this.generate(iterationsPerRound, workLimit);
        pricedAt = total();
      }
      const result = this.master.solve();
      if (!result.optimal) break;
      const order = this.patterns.map((p, j) => ({ p, j, x: result.columnValues[j] ?? 0 })).filter((c) => this.roundable(c.p) && c.x > 1e-9)
        .sort((x, y) => y.x - x.x || x.j - y.j);
      let took = false;
      // A node the caller refuses (a pool limit) ends that pattern's copies; when no
      // pattern is accepted any more, rounding is over.
      const fits = (p: Pattern): boolean => limit === undefined || limit.fits(this.typeIndex[p.type] ?? -1);
      const usable = limit === undefined ? order : order.filter((c) => fits(c.p));
      for (const { p, x } of usable) {
        for (let copy = 0; copy < Math.floor(x + 1e-9); copy++) {
          if (!fits(p) || !this.take(p, nodes, limit)) break;
          took = true;
        }
      }
      if (!took) {
        // No whole copy: one of the largest. (Rounding up every pattern above one half
        // instead was measured worse: aws-realistic 1k 27.62 against 26.90 $/h.) With
        // openers, a pattern whose openers ran out gives way to the next.
        const first = this.openerRow === undefined ? usable.find((c) => fits(c.p)) : usable.find((c) => fits(c.p) && this.take(c.p, nodes, limit));
        if (first === undefined || (this.openerRow === undefined && !this.take(first.p, nodes, limit))) break;
      }
    }
    if (stopAt > 0 && total() > 0 && this.options.coverTail === true) this.coverTail(nodes, limit);
    return { nodes, left: [...this.demand] };
  }

  /**
   * The tail sequential rounding leaves (leaveToGreedy) in one LP solve: the patterns of
   * the master for the demand left, largest x first, each taken ⌈x⌉ times, trimmed to the
   * demand (so later copies shrink and stop); whatever no pattern covers stays left.
   */
  private coverTail(nodes: Pattern[], limit?: RoundLimit): void {
    this.setResidualBounds();
    const result = this.master.solve();
    if (!result.optimal) return;
    const order = this.patterns.map((p, j) => ({ p, j, x: result.columnValues[j] ?? 0 })).filter((c) => this.roundable(c.p) && c.x > 1e-9)
      .sort((x, y) => y.x - x.x || x.j - y.j);
    for (const { p, x } of order) {
      for (let copy = 0; copy < Math.ceil(x - 1e-9); copy++) {
        if ((limit !== undefined && !limit.fits(this.typeIndex[p.type] ?? -1)) || !this.take(p, nodes, limit)) break;
      }
    }
  }

  /**
   * For rounding, price only the types the LP uses and those whose best pattern came
   * closest to paying off: the residual problems are small, and pricing every type for
   * each of them dominated the solve time (aws-realistic 1k: 12 s → 3 s).
   */
  private narrowPricing(): void {
    const result = this.master.solve();
    const keep = new Set<number>();
    if (result.optimal) this.patterns.forEach((p, j) => { if (p.type >= 0 && (result.columnValues[j] ?? 0) > 1e-9) keep.add(p.type); });
    const byRatio = this.a.map((_, t) => t).sort((x, y) => (this.lastRatio[y] ?? 0) - (this.lastRatio[x] ?? 0) || x - y);
    for (const t of byRatio.slice(0, narrowExtra)) keep.add(t);
    this.pricing = [...keep].sort((x, y) => x - y);
  }

  /** The master's rows for what is left: the demand, and with openers the nodes each item may still open. */
  private setResidualBounds(): void {
    this.demand.forEach((n, k) => this.master.changeRowBounds(k, n, this.solver.infinity));
    this.openerRow?.forEach((row, k) => { if (row >= 0) this.master.changeRowBounds(row, -this.solver.infinity, this.openersLeft[k] ?? 0); });
  }

  /** Whether rounding may make nodes of the pattern: a real type, and with openers, an opener. */
  private roundable(pattern: Pattern): boolean {
    return pattern.type >= 0 && (this.openerRow === undefined || (pattern.opener ?? -1) >= 0);
  }

  /**
   * One node of the pattern, trimmed to the demand left; false if it would hold nothing,
   * or, with openers, if no item it still holds has an opener left (its own opener first).
   */
  private take(pattern: Pattern, nodes: Pattern[], limit?: RoundLimit): boolean {
    // (plain loops: Int32Array.from with a map function and forEach were a tenth of the
    // guide's time at 20k pods, one call per node taken)
    const counts = new Int32Array(pattern.counts.length);
    let any = false;
    for (let k = 0; k < counts.length; k++) {
      const c = Math.min(pattern.counts[k] ?? 0, this.demand[k] ?? 0);
      counts[k] = c;
      if (c > 0) any = true;
    }
    if (!any) return false;
    let opener = -1;
    if (this.openerRow !== undefined) {
      const own = pattern.opener ?? -1;
      opener = own >= 0 && (counts[own] ?? 0) > 0 && (this.openersLeft[own] ?? 0) > 0 ? own : this.openerIn(counts);
      if (opener < 0) return false;
      this.openersLeft[opener] = (this.openersLeft[opener] ?? 0) - 1;
    }
    for (let k = 0; k < counts.length; k++) this.demand[k] = (this.demand[k] ?? 0) - (counts[k] ?? 0);
    const type = this.typeIndex[pattern.type] ?? -1;
    limit?.take(type);
    nodes.push(this.openerRow === undefined ? { type, counts } : { type, counts, opener });
    return true;
  }

  private items(t: number, pi: Float64Array): Items {
    const k: number[] = [];
    const ub: number[] = [];
    for (let i = 0; i < this.count.length; i++) {
      if ((pi[i] ?? 0) <= 0) continue;
      const copies = this.copiesOn(i, t, this.demand[i] ?? 0);
      if (copies > 0) {
        k.push(i);
        ub.push(copies);
      }
    }
    return { k, ub };
  }

  private reduced(k: number, pi: Float64Array, lambda: Float64Array): number {
    const r = this.r[k];
    let q = pi[k] ?? 0;
    for (let i = 0; i < lambda.length; i++) q -= (lambda[i] ?? 0) * (r?.[i] ?? 0);
    return q;
  }

  /** The knapsack's LP relaxation as multipliers λ ≥ 0 on the capacities, and the bound they give (valid for any λ ≥ 0). */
  private relaxation(t: number, pi: Float64Array, items: Items): { lambda: Float64Array; upper: number; primal?: Float64Array } {
    const a = this.a[t] ?? new Float64Array(0);
    const d = a.length;
    const lambda = new Float64Array(d);
    let primal: Float64Array | undefined;
    let trivial = 0;
    items.k.forEach((k, j) => { trivial += (pi[k] ?? 0) * (items.ub[j] ?? 0); });
    if (items.k.length === 0) return { lambda, upper: 0 };
    const model = this.solver.createModel();
    try {
      for (let i = 0; i < d; i++) model.addRow(-this.solver.infinity, a[i] ?? 0);
      items.k.forEach((k, j) => {
        const r = this.r[k];
        const rows: number[] = [];
        const values: number[] = [];
        for (let i = 0; i < d; i++) if ((r?.[i] ?? 0) > 0) { rows.push(i); values.push(r?.[i] ?? 0); }
        model.addColumn({ cost: -(pi[k] ?? 0), lower: 0, upper: items.ub[j] ?? 0, rows, values });
      });
      const result = model.solve();
      if (result.optimal) {
        for (let i = 0; i < d; i++) lambda[i] = Math.abs(result.rowDuals[i] ?? 0);
        primal = Float64Array.from(result.columnValues);
      }
    } finally {
      model.dispose();
    }
    let upper = 0;
    for (let i = 0; i < d; i++) upper += (lambda[i] ?? 0) * (a[i] ?? 0);
    items.k.forEach((k, j) => { upper += (items.ub[j] ?? 0) * Math.max(0, this.reduced(k, pi, lambda)); });
    return { lambda, upper: Math.min(upper, trivial), primal };
  }

  /**
   * Farley's ρ once more at the converged round, where the bound is taken: the types a
   * search could not finish were priced at their LP relaxation, and on large types that is
   * loose (Karpenter's input at 10k pods: 1.007–1.03 of the price where the best pattern is
   * 1.000, so ρ was 1.05). Types by relaxation bound as in the round, each priced exactly
   * again (or as the round did), an unfinished one bounded by lagrangianUpper, until no
   * relaxation bound is above the ratio found: every type's best pattern is then within ρ.
   * A type the round had not reached may hold an improving pattern: it is added, and the
   * round was not the last. Only here, not in every round: it costs a dynamic program per
   * such type.
   */
  private tightenedRho(pi: Float64Array, order: readonly { t: number; upper: number }[], exactly: ReadonlyMap<number, { upper: number; exact: boolean; lambda?: Float64Array }>): { rho: number; added: number } {
    let rho = 0;
    let added = 0;
    for (const { t, upper } of order) {
      if (upper <= Math.max(1, rho)) break;
      const price = this.price[t] ?? 1;
      let priced = exactly.get(t);
      if (priced === undefined) {
        const fresh = this.exactPrice(t, pi);
        if (fresh.value / price > improving && fresh.pattern !== undefined && this.addColumn(t, fresh.pattern)) added += 1;
        priced = fresh;
      }
      let ratio = priced.upper / price;
      // (an inexact price always comes with the relaxation's multipliers)
      if (!priced.exact && priced.lambda !== undefined && ratio > Math.max(1, rho)) {
        ratio = Math.min(ratio, this.lagrangianUpper(t, pi, this.items(t, pi), priced.lambda, lagrangianBudget) / price);
      }
      rho = Math.max(rho, ratio);
    }
    // (types not reached are within max(1, ρ) by their relaxation bound)
    return { rho: Math.max(1, rho), added };
  }

  private exactPrice(t: number, pi: Float64Array): Priced & { readonly exact: boolean; readonly lambda?: Float64Array } {
    const items = this.items(t, pi);
    const dp = this.dynamicProgram(t, pi, items, this.options.dpBudget, false);
    // A grid too large to trace (pieces × states over its cap) gives the best value but no
    // pattern: when that value would improve the master, the search below finds a pattern
    // (Karpenter's input at 1k pods: a 15-cpu type at 1.038 of its price, so column
    // generation stopped there, "converged").
    const untraced = dp !== undefined && dp.pattern === undefined && dp.value > (this.price[t] ?? 0) * improving;
    if (dp !== undefined && !untraced) return { ...this.withinRules(dp, pi), exact: true };
    const { lambda, upper, primal } = this.relaxation(t, pi, items);
    const found = this.branchAndBound(t, pi, items, lambda, this.options.searchNodes);
    // An unfinished search may hold a pattern far below the relaxation: its depth-first
    // start fills by one density and strands a dimension (Karpenter's benchmark on its
    // 385-cpu type: 0.96 of the price against a relaxation of 1.25), so the column that
    // would lower the master is never added. The relaxation's solution rounded down and
    // topped up is within a few pods of it on a large type.
    const rounded = found.exact || primal === undefined ? undefined : this.roundedRelaxation(t, pi, items, primal);
    const best = rounded !== undefined && rounded.value > found.value ? rounded : found;
    const exact = dp !== undefined || found.exact;
    const bound = dp !== undefined ? dp.upper : found.exact ? found.value : upper;
    return { ...this.withinRules({ upper: bound, value: best.value, pattern: best.pattern }, pi), exact, lambda };
  }

  /**
   * An upper bound on the type's knapsack (max π·a over its patterns) where the search could
   * not finish: Lagrangian relaxation. One binding dimension is kept whole, integer, by a
   * 1-D dynamic program, at most one slot item on top; every other dimension i is priced
   * by a multiplier μ_i ≥ 0 — max Σ (π_k − μ·r_k)·x_k + μ·a over the patterns that fit the
   * kept dimension — which is ≥ the knapsack's value for any μ ≥ 0. μ starts at the LP
   * relaxation's multipliers (so the bound is no weaker than the LP relaxation) and each
   * other dimension's is then searched. On large types the LP relaxation is loose where this
   * is not: Karpenter's input at 10k pods, 1.007–1.03 of the price against 1.0000003, with
   * the best pattern found at 0.9999993. `budget` caps the dynamic programs' cells.
   */
  private lagrangianUpper(t: number, pi: Float64Array, items: Items, lambda: Float64Array, budget: number): number {
    const a = this.a[t] ?? new Float64Array(0);
    const d = a.length;
    const m = items.k.length;
    if (m === 0) return 0;
    const shapeOf = (j: number): Float64Array => this.r[items.k[j] ?? 0] ?? new Float64Array(d);
    let slot = -1;
    for (let i = 0; i < d && slot < 0; i++) if (isSlot(a, i, items, shapeOf) && totalOn(items, shapeOf, i) > 0) slot = i;
    const binds = (i: number): boolean => totalOn(items, shapeOf, i) > (a[i] ?? 0);
    let pieceCount = 0;
    for (const ub of items.ub) pieceCount += Math.ceil(Math.log2(ub + 1));
    const bindingDims: number[] = [];
    for (let i = 0; i < d; i++) if (i !== slot && binds(i)) bindingDims.push(i);
    let bound = Infinity;
    // Each binding dimension is kept whole in turn, narrowest first, while the work allows
    // (`budget` cells in all): the others' multipliers start at the LP's (already no weaker
    // than the LP relaxation), then each is searched in turn (golden section: the bound is
    // convex in it). Every value computed is a valid bound.
    let work = 0;
    // A dimension every item takes the same amount of (the pod count) adds little beyond a
    // cardinality limit, kept whole or searched: such dimensions come last as the kept one
    // and keep the LP's multiplier otherwise; the others narrowest first.
    const uniform = (i: number): boolean => {
      const first = shapeOf(0)[i] ?? 0;
      for (let j = 1; j < m; j++) if ((shapeOf(j)[i] ?? 0) !== first) return false;
      return true;
    };
    const keeps = [...bindingDims].sort((x, y) => Number(uniform(x)) - Number(uniform(y)) || (a[x] ?? 0) - (a[y] ?? 0));
    for (const keep of keeps) {
      const width = a[keep] ?? 0;
      const cells = (width + 1) * Math.max(1, pieceCount);
      if (work + cells > budget) break;
      const mu = Float64Array.from(lambda);
      mu[keep] = 0;
      if (slot >= 0) mu[slot] = 0;
      const evaluate = (): number => {
        work += cells;
        const value = this.keptDimensionBound(items, shapeOf, pi, keep, slot, width, mu, a);
        bound = Math.min(bound, value);
        return value;
      };
      evaluate();
      for (const other of bindingDims) {
        if (other === keep || uniform(other) || work + searchSteps * cells > budget) continue;
        let hi = 0;
        for (let j = 0; j < m; j++) {
          const size = shapeOf(j)[other] ?? 0;
          if (size > 0) hi = Math.max(hi, (pi[items.k[j] ?? 0] ?? 0) / size);
        }
        mu[other] = goldenSection(0, hi, searchSteps - 2, (x) => {
          mu[other] = x;
          return evaluate();
        });
      }
    }
    return bound;
  }

  /**
   * max Σ (π_k − μ·r_k)·x_k + μ·a over integer x ≤ ub that fit `width` on the kept
   * dimension, with at most one slot item: a 1-D bounded knapsack by binary splitting.
   */
  private keptDimensionBound(items: Items, shapeOf: (j: number) => Float64Array, pi: Float64Array, keep: number, slot: number, width: number, mu: Float64Array, a: Float64Array): number {
    let constant = 0;
    for (let i = 0; i < a.length; i++) if (i !== keep && i !== slot) constant += (mu[i] ?? 0) * (a[i] ?? 0);
    const best = this.scratchGrid(width + 1);
    const slotted: { size: number; value: number }[] = [];
    // Items that take none of the kept dimension fit every state: all their copies count.
    let free = 0;
    for (let j = 0; j < items.k.length; j++) {
      const v = shapeOf(j);
      let value = pi[items.k[j] ?? 0] ?? 0;
      for (let i = 0; i < v.length; i++) if (i !== keep && i !== slot) value -= (mu[i] ?? 0) * (v[i] ?? 0);
      if (value <= 0) continue;
      const size = v[keep] ?? 0;
      if (size > width) continue;
      if (slot >= 0 && (v[slot] ?? 0) === 1) {
        slotted.push({ size, value });
        continue;
      }
      let left = items.ub[j] ?? 0;
      if (size === 0) {
        free += left * value;
        continue;
      }
      for (let copies = 1; left > 0; copies *= 2) {
        const take = Math.min(copies, left);
        left -= take;
        const x = take * size;
        const gain = take * value;
        for (let c = width; c >= x; c--) {
          const candidate = (best[c - x] as number) + gain;
          if (candidate > (best[c] as number)) best[c] = candidate;
        }
      }
    }
    // best[c]: the best within c (so never less than at a smaller c).
    let value = best[width] ?? 0;
    for (const item of slotted) value = Math.max(value, (best[width - item.size] ?? 0) + item.value);
    this.work += (width + 1) * Math.max(1, items.k.length);
    return value + free + constant;
  }

  /** The knapsack relaxation's solution (per item of `items`) rounded down, then topped up densest first. */
  private roundedRelaxation(t: number, pi: Float64Array, items: Items, primal: Float64Array): { value: number; pattern: Int32Array } {
    const room = Float64Array.from(this.a[t] ?? new Float64Array(0));
    const counts = new Int32Array(items.k.length);
    const add = (j: number, copies: number): void => {
      const r = this.r[items.k[j] ?? 0] ?? new Float64Array(0);
      counts[j] = (counts[j] ?? 0) + copies;
      for (let i = 0; i < room.length; i++) room[i] = (room[i] ?? 0) - copies * (r[i] ?? 0);
    };
    const most = (j: number): number => {
      const r = this.r[items.k[j] ?? 0] ?? new Float64Array(0);
      let n = (items.ub[j] ?? 0) - (counts[j] ?? 0);
      for (let i = 0; i < room.length; i++) if ((r[i] ?? 0) > 0) n = Math.min(n, Math.floor((room[i] ?? 0) / (r[i] ?? 1)));
      return Math.max(0, n);
    };
    items.k.forEach((_, j) => add(j, Math.min(most(j), Math.floor((primal[j] ?? 0) + 1e-9))));
    for (const j of this.densityOrder(t, pi, items)) add(j, most(j));
    let value = 0;
    items.k.forEach((k, j) => { value += (counts[j] ?? 0) * (pi[k] ?? 0); });
    return { value, pattern: this.pattern(items, counts) };
  }

  /** The dynamic program where grid × pieces fits the budget, else a greedy fill. */
  private fastPrice(t: number, pi: Float64Array): Priced {
    const items = this.items(t, pi);
    const upper = this.singleDimensionBound(t, pi, items);
    if (upper <= (this.price[t] ?? 0) * improving) return { upper, value: 0, pattern: undefined };
    return this.withinRules(this.dynamicProgram(t, pi, items, this.options.fastBudget, true) ?? this.greedy(t, pi, items), pi);
  }

  /** A priced pattern repaired to keep the rules (its value recomputed; the upper bound stays, still valid). */
  private withinRules(priced: Priced, pi: Float64Array): Priced {
    if (this.rules.length === 0 || priced.pattern === undefined) return priced;
    const pattern = this.repairRules(priced.pattern, pi);
    let value = 0;
    pattern.forEach((c, k) => { value += c * (pi[k] ?? 0); });
    return { upper: priced.upper, value, pattern };
  }

  /** Per dimension, the items by dual value per unit of it, best first (cached per duals). */
  private ratioOrders(pi: Float64Array): number[][] {
    if (this.orderDuals === pi && this.orders !== undefined) return this.orders;
    const d = this.r[0]?.length ?? 0;
    const orders: number[][] = [];
    for (let i = 0; i < d; i++) {
      const order = this.r.map((_, k) => k).filter((k) => (pi[k] ?? 0) > 0 && (this.r[k]?.[i] ?? 0) > 0);
      const ratio = (k: number): number => (pi[k] ?? 0) / (this.r[k]?.[i] ?? 1);
      order.sort((x, y) => ratio(y) - ratio(x) || x - y);
      orders.push(order);
    }
    this.orders = orders;
    this.orderDuals = pi;
    return orders;
  }

  /** The least of the fractional knapsacks on one dimension each: an upper bound, O(items) per dimension. */
  private singleDimensionBound(t: number, pi: Float64Array, items: Items): number {
    const a = this.a[t] ?? new Float64Array(0);
    const ub = new Float64Array(this.count.length);
    let best = 0;
    items.k.forEach((k, j) => {
      ub[k] = items.ub[j] ?? 0;
      best += (pi[k] ?? 0) * (items.ub[j] ?? 0);
    });
    const orders = this.ratioOrders(pi);
    for (let i = 0; i < a.length; i++) {
      let room = a[i] ?? 0;
      // Items that take none of this dimension come for free in this relaxation.
      let value = 0;
      items.k.forEach((k, j) => { if ((this.r[k]?.[i] ?? 0) === 0) value += (pi[k] ?? 0) * (items.ub[j] ?? 0); });
      for (const k of orders[i] ?? []) {
        const limit = ub[k] ?? 0;
        if (limit === 0) continue;
        const size = this.r[k]?.[i] ?? 1;
        const copies = Math.min(limit, room / size);
        value += copies * (pi[k] ?? 0);
        room -= copies * size;
        if (room <= 0) break;
      }
      best = Math.min(best, value);
    }
    this.work += this.count.length * a.length;
    return best;
  }

  private densityOrder(t: number, pi: Float64Array, items: Items): number[] {
    const a = this.a[t] ?? new Float64Array(0);
    // (typed array and loops: this runs for every greedily priced type, thousands of times a solve)
    const density = new Float64Array(items.k.length);
    const order: number[] = [];
    for (let j = 0; j < density.length; j++) {
      const k = items.k[j] ?? 0;
      const r = this.r[k];
      let size = 0;
      for (let i = 0; i < a.length; i++) size += (r?.[i] ?? 0) / Math.max(1, a[i] ?? 0);
      density[j] = (pi[k] ?? 0) / Math.max(1e-12, size);
      order.push(j);
    }
    return order.sort((x, y) => (density[y] ?? 0) - (density[x] ?? 0) || x - y);
  }

  private pattern(items: Items, counts: ArrayLike<number>): Int32Array {
    const pattern = new Int32Array(this.count.length);
    items.k.forEach((k, j) => { pattern[k] = counts[j] ?? 0; });
    return pattern;
  }

  /**
   * Densest first, as many copies as fit; then the same again for what is left. With
   * `first`, one copy of that item goes on before the others (an opener, withOpener).
   */
  private greedy(t: number, pi: Float64Array, items: Items, first?: number): Priced {
    this.work += 4 * items.k.length * (this.a[t]?.length ?? 1);
    const room = Float64Array.from(this.a[t] ?? new Float64Array(0));
    const counts = new Int32Array(items.k.length);
    /** The same counts by problem item, for the rules (only kept when there are rules: this runs thousands of times a solve). */
    const full = new Int32Array(this.rules.length > 0 ? this.count.length : 0);
    let value = 0;
    const firstAt = first === undefined ? -1 : items.k.indexOf(first);
    if (first !== undefined) {
      const r = this.r[first] ?? new Float64Array(0);
      for (let i = 0; i < room.length; i++) room[i] = (room[i] ?? 0) - (r[i] ?? 0);
      if (room.some((v) => v < 0)) return { upper: Infinity, value: 0, pattern: undefined };
      if (firstAt >= 0) counts[firstAt] = 1;
      if (full.length > 0) full[first] = 1;
      value += pi[first] ?? 0;
    }
    const order = this.densityOrder(t, pi, items);
    for (let pass = 0; pass < 2; pass++) {
      for (const j of order) {
        const k = items.k[j] ?? 0;
        const r = this.r[k] ?? new Float64Array(0);
        let copies = (items.ub[j] ?? 0) - (counts[j] ?? 0);
        for (let i = 0; i < room.length; i++) if ((r[i] ?? 0) > 0) copies = Math.min(copies, Math.floor((room[i] ?? 0) / (r[i] ?? 1)));
        if (copies > 0 && this.rules.length > 0) copies = Math.min(copies, this.ruleRoom(k, full));
        if (copies <= 0) continue;
        counts[j] = (counts[j] ?? 0) + copies;
        if (full.length > 0) full[k] = (full[k] ?? 0) + copies;
        value += copies * (pi[k] ?? 0);
        for (let i = 0; i < room.length; i++) room[i] = (room[i] ?? 0) - copies * (r[i] ?? 0);
      }
    }
    const pattern = this.pattern(items, counts);
    if (first !== undefined && firstAt < 0) pattern[first] = 1;
    return { upper: Infinity, value, pattern };
  }

  /**
   * The priced pattern with an opener (PatternProblem.openers): the item it holds with the
   * least penalty (its opener row's dual), or a pattern built around one of the best
   * openers the type allows (one copy, then the greedy fill), whichever is worth more net
   * of the penalty. A pattern holding no opener has no value.
   */
  private withOpener(t: number, pi: Float64Array, priced: Priced): Priced {
    const rows = this.openerRow ?? new Int32Array(0);
    const penalty = (k: number): number => pi[rows[k] ?? -1] ?? 0;
    let best: Priced = { upper: priced.upper, value: 0, pattern: undefined };
    if (priced.pattern !== undefined) {
      const opener = this.openerIn(priced.pattern, penalty);
      if (opener >= 0) {
        best = { upper: priced.upper, value: priced.value - penalty(opener), pattern: priced.pattern, opener };
        if (penalty(opener) === 0) return best;
      }
    }
    // (fastPrice found no pattern worth its price even without openers: none is)
    if (priced.pattern === undefined && priced.upper <= (this.price[t] ?? 0) * improving) return best;
    const candidates: number[] = [];
    for (let k = 0; k < rows.length; k++) {
      if ((rows[k] ?? -1) >= 0 && (this.openersLeft[k] ?? 0) > 0 && (this.demand[k] ?? 0) > 0 && this.copiesOn(k, t, 1) > 0) candidates.push(k);
    }
    const worth = (k: number): number => (pi[k] ?? 0) - penalty(k);
    candidates.sort((x, y) => worth(y) - worth(x) || x - y);
    const items = candidates.length > 0 ? this.items(t, pi) : { k: [], ub: [] };
    for (const k of candidates.slice(0, forcedOpeners)) {
      const around = this.greedy(t, pi, items, k);
      const value = around.value - penalty(k);
      if (around.pattern !== undefined && value > best.value) best = { upper: priced.upper, value, pattern: around.pattern, opener: k };
    }
    return best;
  }

  private branchAndBound(t: number, pi: Float64Array, items: Items, lambda: Float64Array, limit: number): { value: number; pattern: Int32Array; exact: boolean } {
    const a = this.a[t] ?? new Float64Array(0);
    const m = items.k.length;
    if (m === 0) return { value: 0, pattern: new Int32Array(this.count.length), exact: true };
    const d = a.length;
    const order = this.densityOrder(t, pi, items);
    const ks = order.map((j) => items.k[j] ?? 0);
    const ubs = order.map((j) => items.ub[j] ?? 0);
    const suffix = new Float64Array(m + 1);
    for (let j = m - 1; j >= 0; j--) suffix[j] = (suffix[j + 1] ?? 0) + (ubs[j] ?? 0) * Math.max(0, this.reduced(ks[j] ?? 0, pi, lambda));
    const room = Float64Array.from(a);
    const current = new Int32Array(m);
    let best = -1;
    let bestCounts = new Int32Array(m);
    let nodes = 0;
    let exact = true;
    const visit = (j: number, value: number): void => {
      if (value > best) {
        best = value;
        bestCounts = current.slice();
      }
      if (j >= m || !exact) return;
      if (++nodes > limit) {
        exact = false;
        return;
      }
      let bound = value + (suffix[j] ?? 0);
      for (let i = 0; i < d; i++) bound += (lambda[i] ?? 0) * (room[i] ?? 0);
      if (bound <= best * (1 + 1e-12)) return;
      const k = ks[j] ?? 0;
      const r = this.r[k] ?? new Float64Array(d);
      let most = ubs[j] ?? 0;
      for (let i = 0; i < d; i++) if ((r[i] ?? 0) > 0) most = Math.min(most, Math.floor((room[i] ?? 0) / (r[i] ?? 1)));
      for (let copies = most; copies >= 0 && exact; copies--) {
        for (let i = 0; i < d; i++) room[i] = (room[i] ?? 0) - copies * (r[i] ?? 0);
        current[j] = copies;
        visit(j + 1, value + copies * (pi[k] ?? 0));
        for (let i = 0; i < d; i++) room[i] = (room[i] ?? 0) + copies * (r[i] ?? 0);
        current[j] = 0;
      }
    };
    visit(0, 0);
    const counts = new Int32Array(m);
    order.forEach((j, position) => { counts[j] = bestCounts[position] ?? 0; });
    return { value: Math.max(0, best), pattern: this.pattern(items, counts), exact };
  }

  /**
   * The dynamic program's grid, zeroed, reused from call to call: a fresh one per call
   * (up to 100,000 states, 800 kB) made most of the guide's garbage.
   */
  private scratchGrid(states: number): Float64Array {
    if (this.grid.length < states) this.grid = new Float64Array(states);
    const grid = this.grid.subarray(0, states);
    grid.fill(0);
    return grid;
  }

  /** The dynamic program's trace bits, zeroed, reused like scratchGrid. */
  private scratchTrace(bytes: number): Uint8Array {
    if (this.trace.length < bytes) this.trace = new Uint8Array(bytes);
    const trace = this.trace.subarray(0, bytes);
    trace.fill(0);
    return trace;
  }

  /**
   * Exact bounded knapsack by dynamic programming over at most two dimensions, when the
   * others cannot bind: a dimension cannot if all items together fit in it, or if a
   * dimension still enforced caps it (every item's ratio between the two, times the
   * other's capacity, is within its own). Binary splitting turns bounded items into 0/1
   * pieces; a bit per piece and state recovers the pattern when that fits in memory.
   * `budget` caps the grid, or grid × pieces when `perPiece`.
   */
  private dynamicProgram(t: number, pi: Float64Array, items: Items, budget: number, perPiece: boolean): Priced | undefined {
    const a = this.a[t] ?? new Float64Array(0);
    const d = a.length;
    const shapeOf = (j: number): Float64Array => this.r[items.k[j] ?? 0] ?? new Float64Array(d);
    // 0 enforced, 1 implied by the items' total, 2 implied by an enforced dimension.
    const role = new Uint8Array(d);
    for (let i = 0; i < d; i++) if (totalOn(items, shapeOf, i) <= (a[i] ?? 0)) role[i] = 1;
    for (let i = 0; i < d; i++) {
      if (role[i] !== 0) continue;
      for (let s = 0; s < d; s++) {
        if (s === i || role[s] === 2) continue;
        let ratio = 0;
        let usable = true;
        items.k.forEach((_, j) => {
          const v = shapeOf(j);
          if ((v[i] ?? 0) === 0) return;
          if ((v[s] ?? 0) === 0) usable = false;
          else ratio = Math.max(ratio, (v[i] ?? 0) / (v[s] ?? 1));
        });
        if (usable && ratio * (a[s] ?? 0) <= (a[i] ?? 0)) {
          role[i] = 2;
          break;
        }
      }
    }
    const binding: number[] = [];
    for (let i = 0; i < d; i++) if (role[i] === 0) binding.push(i);
    // A slot dimension (capacity 1, every item takes 0 or 1 of it: configuration-bound.ts's
    // pods that need a node each) stays off the grid: the grid is solved for the items
    // without a slot, and a slot item then takes the best state its requests leave room for.
    const slot = binding.length === 3 ? binding.find((i) => isSlot(a, i, items, shapeOf)) : undefined;
    if (slot !== undefined) binding.splice(binding.indexOf(slot), 1);
    if (binding.length > 2) return undefined;
    const slotted = (j: number): boolean => slot !== undefined && (shapeOf(j)[slot] ?? 0) === 1;
    const [first, second] = binding;
    const w1 = first === undefined ? 0 : a[first] ?? 0;
    const w2 = second === undefined ? 0 : a[second] ?? 0;
    const width = w2 + 1;
    const states = (w1 + 1) * width;
    // Over budget, the greedy prices the type instead: count the pieces before building them.
    // In the cheap round the grid itself is capped too: a large grid with few pieces
    // allocated tens of MB per call (many-pools: 300 MB of typed-array garbage).
    let pieceCount = 0;
    for (const ub of items.ub) for (let copies = 1, left = ub; left > 0; copies *= 2) {
      left -= Math.min(copies, left);
      pieceCount += 1;
    }
    if ((perPiece ? states * Math.max(1, pieceCount) : states) > budget || (perPiece && states > maxFastStates)) return undefined;
    const pieces: { j: number; copies: number; x: number; y: number; value: number }[] = [];
    items.k.forEach((k, j) => {
      const v = shapeOf(j);
      let left = slotted(j) ? 0 : items.ub[j] ?? 0;
      for (let copies = 1; left > 0; copies *= 2) {
        const take = Math.min(copies, left);
        left -= take;
        pieces.push({ j, copies: take, x: first === undefined ? 0 : take * (v[first] ?? 0), y: second === undefined ? 0 : take * (v[second] ?? 0), value: take * (pi[k] ?? 0) });
      }
    });
    this.work += states * Math.max(1, pieces.length);
    const best = this.scratchGrid(states);
    const traced = pieces.length * states <= 2e8;
    const trace = traced ? this.scratchTrace(Math.ceil((pieces.length * states) / 8)) : undefined;
    for (let p = 0; p < pieces.length; p++) {
      const piece = pieces[p];
      if (piece !== undefined) relaxPiece(best, trace, { piece: p * states, x: piece.x, y: piece.y, value: piece.value, w1, w2 });
    }
    let value = best[states - 1] ?? 0;
    let state = states - 1;
    let slotItem = -1;
    items.k.forEach((k, j) => {
      if (!slotted(j) || (items.ub[j] ?? 0) < 1) return;
      const v = shapeOf(j);
      const x = first === undefined ? 0 : v[first] ?? 0;
      const y = second === undefined ? 0 : v[second] ?? 0;
      if (x > w1 || y > w2) return;
      const at = (w1 - x) * width + (w2 - y);
      const candidate = (best[at] ?? 0) + (pi[k] ?? 0);
      if (candidate > value) {
        value = candidate;
        state = at;
        slotItem = j;
      }
    });
    if (trace === undefined) return { upper: value, value, pattern: undefined };
    const counts = new Int32Array(items.k.length);
    if (slotItem >= 0) counts[slotItem] = 1;
    for (let p = pieces.length - 1; p >= 0; p--) {
      const bit = p * states + state;
      if ((((trace[bit >> 3] ?? 0) >> (bit & 7)) & 1) === 0) continue;
      const piece = pieces[p];
      if (piece === undefined) continue;
      counts[piece.j] = (counts[piece.j] ?? 0) + piece.copies;
      state -= piece.x * width + piece.y;
    }
    return { upper: value, value, pattern: this.pattern(items, counts) };
  }
}

/** What all the items' copies together take of dimension i. */
function totalOn(items: Items, shapeOf: (j: number) => Float64Array, i: number): number {
  let total = 0;
  for (let j = 0; j < items.k.length; j++) total += (items.ub[j] ?? 0) * (shapeOf(j)[i] ?? 0);
  return total;
}

/** A slot dimension: capacity 1, every item takes 0 or 1 of it (configuration-bound.ts's pods that need a node each). */
function isSlot(a: Float64Array, i: number, items: Items, shapeOf: (j: number) => Float64Array): boolean {
  if (a[i] !== 1) return false;
  for (let j = 0; j < items.k.length; j++) {
    const v = shapeOf(j)[i] ?? 0;
    if (v !== 0 && v !== 1) return false;
  }
  return true;
}

/** The argument in [lo, hi] of the least value found by `steps` golden-section steps on a convex f. */
function goldenSection(lo: number, hi: number, steps: number, f: (x: number) => number): number {
  const phi = (Math.sqrt(5) - 1) / 2;
  let x1 = hi - phi * (hi - lo);
  let x2 = lo + phi * (hi - lo);
  let f1 = f(x1);
  let f2 = f(x2);
  for (let step = 0; step < steps; step++) {
    if (f1 <= f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - phi * (hi - lo);
      f1 = f(x1);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + phi * (hi - lo);
      f2 = f(x2);
    }
  }
  return f1 <= f2 ? x1 : x2;
}

/**
 * Cells (width × pieces) of lagrangianUpper's 1-D dynamic programs, per type and exact
 * round. Karpenter's 385-cpu type at 10k pods: cpu is 7,700 steps of 50m and ~500 pieces
 * (4e6 cells an evaluation), memory 197,000 steps of 4 MiB (out of reach).
 */
const lagrangianBudget = 150_000_000;
/** Evaluations of one golden-section search in lagrangianUpper. */
const searchSteps = 12;

/** One 0/1 piece of the dynamic program: its offset in the trace bits, size on the grid's two axes and value. */
interface GridPiece {
  readonly piece: number;
  readonly x: number;
  readonly y: number;
  readonly value: number;
  readonly w1: number;
  readonly w2: number;
}

/**
 * One piece over the whole grid (best[i·(w2+1) + j]: the best value within capacity i, j),
 * from the far corner down so each state takes the piece at most once; sets the piece's
 * trace bit where it improves a state. The innermost loop of the guide's pricing, kept
 * free of closures and allocation.
 */
function relaxPiece(best: Float64Array, trace: Uint8Array | undefined, { piece, x, y, value, w1, w2 }: GridPiece): void {
  const width = w2 + 1;
  for (let i = w1; i >= x; i--) {
    const row = i * width;
    const from = (i - x) * width - y;
    for (let j = w2; j >= y; j--) {
      const candidate = (best[from + j] as number) + value;
      if (candidate > (best[row + j] as number)) {
        best[row + j] = candidate;
        if (trace !== undefined) {
          const bit = piece + row + j;
          trace[bit >> 3] = (trace[bit >> 3] as number) | (1 << (bit & 7));
        }
      }
    }
  }
}
