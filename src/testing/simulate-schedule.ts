// The faults of one simulated run (a schedule), how each reads in a report, and how the
// exploration picks them: first a crash after every distinct write of the reference run (Sieve's
// systematic crash points), then each single merge (per step and resource) and delay (per
// resource), then random mixes of every kind switched on, each from a seed.

/** One write the operator made, named so that the same write is found again in another run. */
export interface WriteSite {
  verb: string;
  plural: string;
  subresource?: string;
  /** the object's name, or its generateName followed by "*" */
  name: string;
  /** the how-manieth write of this verb, resource and object it is (1-based), over every operator instance */
  nth: number;
}

export type Fault =
  /** the operator is killed right after this write commits; a fresh instance starts on the same cluster */
  | { kind: "crash"; after: WriteSite }
  /** watch events of `plural` reach the operator `ms` late while its writes answer at once (a stale cache) */
  | { kind: "delay"; plural: string; ms: number }
  /** from scenario step `step` through the next one, only the latest state of each `plural` object is delivered */
  | { kind: "merge"; plural: string; step: number }
  /** the operator's `nth` write of `verb` on `plural` is answered with `status` instead of being made */
  | { kind: "error"; status: 409 | 429 | 500 | 503; verb: string; plural: string; nth: number };

export interface Schedule {
  /** what `simulate({ seed })` replays: "<master seed>/<index>" */
  seed: string;
  faults: Fault[];
}

export interface FaultKinds {
  crash: boolean;
  delay: boolean;
  merge: boolean;
  errors: boolean;
}

const ORDINAL = ["", "1st", "2nd", "3rd"];
const ordinal = (n: number) => ORDINAL[n] ?? `${n}th`;

export function describeSite(site: WriteSite): string {
  const resource = site.subresource ? `${site.plural}/${site.subresource}` : site.plural;
  return `its ${ordinal(site.nth)} ${site.verb} of ${resource} ${site.name}`;
}

export function describeFault(fault: Fault): string {
  switch (fault.kind) {
    case "crash": return `the operator killed right after ${describeSite(fault.after)}, then restarted`;
    case "delay": return `watch events of ${fault.plural} delivered ${fault.ms} ms late (a stale cache)`;
    case "merge":
      return `events of ${fault.plural} merged over steps ${fault.step}-${fault.step + 1} (only the latest state seen)`;
    case "error":
      return `the operator's ${ordinal(fault.nth)} ${fault.verb} of ${fault.plural} answered ${fault.status}`;
  }
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
  kinds: FaultKinds;
  /** the operator's writes in the reference run */
  sites: WriteSite[];
  /** the resources the run involved (what delays and merges pick from) */
  plurals: string[];
  /** the scenario's steps */
  steps: number;
}

/** The schedules to run, in order: a crash after each distinct write first, then random mixes. */
export function explore(input: ExploreInput): Schedule[] {
  const schedules: Schedule[] = [];
  const seen = new Set<string>();
  const add = (faults: Fault[]) => {
    const key = JSON.stringify(faults);
    if (faults.length === 0 || seen.has(key)) return; // a small scenario has few distinct schedules
    seen.add(key);
    schedules.push({ seed: `${input.seed}/${schedules.length}`, faults });
  };
  if (input.kinds.crash) for (const site of systematic(input.sites)) add([{ kind: "crash", after: site }]);
  for (const plural of input.plurals) {
    if (input.kinds.merge) for (let step = 1; step < input.steps; step++) add([{ kind: "merge", plural, step }]);
    if (input.kinds.delay) add([{ kind: "delay", plural, ms: 300 }]);
  }
  for (let i = 0; schedules.length < input.budget && i < input.budget * 8; i++) {
    add(randomFaults(prng(mix(input.seed, i)), input));
  }
  return schedules.slice(0, input.budget);
}

/** The schedule `seed` ("<master>/<index>") names, given the same reference run. */
export function scheduleOf(seed: string, input: Omit<ExploreInput, "seed" | "budget">): Schedule {
  const match = /^(\d+)\/(\d+)$/.exec(seed);
  if (!match) throw new Error(`simulate({ seed }): ${JSON.stringify(seed)} is not "<master seed>/<schedule index>"`);
  const index = Number(match[2]);
  const found = explore({ ...input, seed: Number(match[1]), budget: index + 1 })[index];
  if (!found) throw new Error(`simulate({ seed: "${seed}" }): this scenario has no schedule ${index}`);
  return found;
}

/** every write of the reference run, the first of each verb and resource first (the distinct sites) */
function systematic(sites: WriteSite[]): WriteSite[] {
  const seen = new Set<string>();
  const first: WriteSite[] = [];
  const rest: WriteSite[] = [];
  for (const site of sites) {
    const key = `${site.verb} ${site.plural}/${site.subresource ?? ""} ${site.name}`;
    (seen.has(key) ? rest : first).push(site);
    seen.add(key);
  }
  return [...first, ...rest];
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
  return faults;
}

function mix(seed: number, index: number): number {
  return (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + Math.imul(index + 1, 0xc2b2ae35)) >>> 0;
}
