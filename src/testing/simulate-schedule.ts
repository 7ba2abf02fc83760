// The schedules of faults a simulation runs, and how the exploration picks them: first a crash
// after every write of the reference run, the first of each distinct write first (Sieve's
// systematic crash points), then each single merge (per step and resource) and delay (per
// resource), a crash before each distinct write, each single expiry (a 410 relist), a
// delete-and-recreate after each write on a scenario object, the Lease taken after each distinct
// write (lease mode); then random mixes of every kind switched on (errors on reads and writes
// among them), each from a seed. The faults themselves: simulate-fault-kinds.ts.

import type { Fault, FaultKinds, RequestSite, WriteSite } from "./simulate-fault-kinds.ts";

export {
  describeFault, describeSite, kindsOf, type Fault, type FaultKinds, type RequestSite, type WriteSite,
} from "./simulate-fault-kinds.ts";

export interface Schedule {
  /** what `simulate({ seed })` replays: "<master seed>/<index>" */
  seed: string;
  faults: Fault[];
}

/** the sites of the writes of one run, in order: each write's name, and its count among writes of the same site */
export function sitesOf(writes: readonly Omit<WriteSite, "nth">[]): WriteSite[] {
  const counts = new Map<string, number>();
  return writes.map((write) => {
    const key = `${write.verb} ${write.plural}/${write.subresource ?? ""} ${write.name}`;
    const nth = (counts.get(key) ?? 0) + 1;
    counts.set(key, nth);
    return { ...write, nth };
  });
}

/** A small, fast, seedable PRNG (mulberry32): the same seed gives the same schedule on every machine. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface ExploreInput {
  seed: number;
  budget: number;
  /** the kinds on (one left out is off) */
  kinds: Partial<FaultKinds>;
  /** the operator's writes in the reference run */
  sites: WriteSite[];
  /** the operator's requests (reads and writes, not watches) in the reference run */
  requests?: RequestSite[];
  /** its writes on objects the scenario made: where a delete-and-recreate strikes */
  recreatable?: WriteSite[];
  /** the resources the run involved (what delays and merges pick from) */
  plurals: string[];
  /** the scenario's steps */
  steps: number;
}

/** The schedules to run, in order: a crash after each distinct write first, the other single faults, random mixes. */
export function explore(input: ExploreInput): Schedule[] {
  const schedules: Schedule[] = [];
  const seen = new Set<string>();
  const add = (faults: Fault[]) => {
    const key = JSON.stringify(faults);
    if (faults.length === 0 || seen.has(key)) return; // a small scenario has few distinct schedules
    seen.add(key);
    schedules.push({ seed: `${input.seed}/${schedules.length}`, faults });
  };
  const { kinds, plurals, steps } = input;
  if (kinds.crash) for (const site of distinct(input.sites).flat()) add([{ kind: "crash", after: site }]);
  for (const plural of plurals) {
    if (kinds.merge) for (let step = 1; step < steps; step++) add([{ kind: "merge", plural, step }]);
    if (kinds.delay) add([{ kind: "delay", plural, ms: 300 }]);
  }
  const writes = (input.requests ?? []).filter((request) => WRITE_VERBS.has(request.verb));
  if (kinds.crash) for (const site of distinct(writes)[0]) add([{ kind: "crash", before: site }]);
  for (const plural of kinds.expire ? plurals : []) {
    for (let step = 1; step < steps; step++) add([{ kind: "expire", plural, step }]);
  }
  const recreatable = distinct(input.recreatable ?? []).flat();
  if (kinds.recreate) for (const site of recreatable) add([{ kind: "recreate", after: site }]);
  if (kinds.lease) for (const site of distinct(input.sites)[0]) add([{ kind: "lease", after: site }]);
  const requests = kinds.timeout ? distinct(input.requests ?? [])[0] : [];
  for (const { verb, plural } of requests) add([timeoutOf(verb, plural, 1)]);
  for (let i = 0; schedules.length < input.budget && i < input.budget * 8; i++) {
    add(randomFaults(prng(mix(input.seed, i)), input));
  }
  return schedules.slice(0, input.budget);
}

/** The schedule `seed` ("<master>/<index>") names, given the same reference run. */
export function scheduleOf(seed: string, input: Omit<ExploreInput, "seed" | "budget">): Schedule {
  const match = SCHEDULE_SEED.exec(seed);
  if (!match) throw new Error(`simulate({ seed }): ${JSON.stringify(seed)} is not "<master seed>/<schedule index>"`);
  const index = Number(match[2]);
  const found = explore({ ...input, seed: Number(match[1]), budget: index + 1 })[index];
  if (!found) throw new Error(`simulate({ seed: "${seed}" }): this scenario has no schedule ${index}`);
  return found;
}

/** how a schedule's seed is written: "<master seed>/<schedule index>" */
export const SCHEDULE_SEED = /^(\d+)\/(\d+)$/;

const WRITE_VERBS = new Set(["create", "update", "patch", "delete"]);

/** the sites, split: the first of each verb, resource and object (the distinct ones), and the repeats */
function distinct<S extends WriteSite | RequestSite>(sites: S[]): [S[], S[]] {
  const seen = new Set<string>();
  const first: S[] = [];
  const rest: S[] = [];
  for (const site of sites) {
    const key = `${site.verb} ${site.plural}/${site.subresource ?? ""} ${site.name}`;
    (seen.has(key) ? rest : first).push(site);
    seen.add(key);
  }
  return [first, rest];
}

function randomFaults(random: () => number, input: ExploreInput): Fault[] {
  const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(random() * items.length)];
  const faults: Fault[] = [];
  const { kinds, sites, plurals, steps } = input;
  const site = pick(sites);
  if (kinds.crash && site && random() < 0.7) faults.push({ kind: "crash", after: site });
  const plural = pick(plurals);
  if (kinds.delay && plural && random() < 0.5) faults.push({ kind: "delay", plural, ms: pick([150, 300, 600])! });
  const merged = pick(plurals);
  if (kinds.merge && merged && steps >= 2 && random() < 0.5) {
    faults.push({ kind: "merge", plural: merged, step: 1 + Math.floor(random() * (steps - 1)) });
  }
  const failed = pick(sites);
  if (kinds.errors && failed && random() < 0.25) {
    const nth = sites.filter((s) => s.verb === failed.verb && s.plural === failed.plural).indexOf(failed) + 1;
    faults.push({ kind: "error", status: pick([409, 500] as const)!, verb: failed.verb, plural: failed.plural, nth });
  }
  faults.push(...moreRandomFaults(random, pick, input));
  return faults;
}

/** the kinds added later, drawn after the first four so that those draw as they always did from a seed */
function moreRandomFaults(random: () => number, pick: <T>(items: readonly T[]) => T | undefined, input: ExploreInput) {
  const faults: Fault[] = [];
  const { kinds, plurals, steps } = input;
  const requests = input.requests ?? [];
  const before = pick(requests);
  if (kinds.crash && before && random() < 0.3) faults.push({ kind: "crash", before });
  const request = pick(requests);
  if (kinds.errors && request && random() < 0.3) {
    const { verb, plural } = request;
    const nth = requests.filter((r) => r.verb === verb && r.plural === plural).indexOf(request) + 1;
    const statuses = WRITE_VERBS.has(verb) ? [409, 429, 503] as const : [429, 500, 503] as const;
    faults.push({ kind: "error", status: pick(statuses)!, verb, plural, nth });
  }
  const expired = pick(plurals);
  if (kinds.expire && expired && steps >= 2 && random() < 0.3) {
    faults.push({ kind: "expire", plural: expired, step: 1 + Math.floor(random() * (steps - 1)) });
  }
  const recreated = pick(input.recreatable ?? []);
  if (kinds.recreate && recreated && random() < 0.2) faults.push({ kind: "recreate", after: recreated });
  // drawn only when on: the other kinds draw from a seed as they did before it
  const leased = kinds.lease ? pick(input.sites) : undefined;
  if (leased && random() < 0.3) faults.push({ kind: "lease", after: leased });
  const stalled = kinds.timeout ? pick(requests) : undefined;
  if (stalled && random() < 0.3) {
    const nth = requests.filter((r) => r.verb === stalled.verb && r.plural === stalled.plural).indexOf(stalled) + 1;
    faults.push(timeoutOf(stalled.verb, stalled.plural, nth));
  }
  return faults;
}

function mix(seed: number, index: number): number {
  return (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + Math.imul(index + 1, 0xc2b2ae35)) >>> 0;
}

function timeoutOf(verb: string, plural: string, nth: number): Fault {
  return { kind: "timeout", verb, plural, nth };
}
