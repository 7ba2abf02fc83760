// The faults a simulated run can be put through, each as a schedule lists it and as a report
// tells it: the points they strike at are named (WriteSite, RequestSite) so that the same point
// is found again in another run of the same scenario.

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

/** One request the operator sent (a read or a write), named as it arrives: a create's or a list's name is "" */
export interface RequestSite {
  verb: string;
  plural: string;
  subresource?: string;
  name: string;
  /** the how-manieth request of this verb, resource and name it is (1-based), over every operator instance */
  nth: number;
}

export type Fault =
  /** the operator is killed right after this write commits; a fresh instance starts on the same cluster */
  | { kind: "crash"; after: WriteSite }
  /** the operator is killed as this request reaches the API server, before it is served (it dies on that await) */
  | { kind: "crash"; before: RequestSite }
  /** watch events of `plural` reach the operator `ms` late while its writes answer at once (a stale cache) */
  | { kind: "delay"; plural: string; ms: number }
  /** from scenario step `step` through the next one, only the latest state of each `plural` object is delivered */
  | { kind: "merge"; plural: string; step: number }
  /** from step `step` through the next, events of `plural` are held, then its watches get ERROR 410 (a relist) */
  | { kind: "expire"; plural: string; step: number }
  /** the operator's `nth` request of `verb` on `plural` (a read or a write) is answered `status` instead */
  | { kind: "error"; status: 409 | 429 | 500 | 503; verb: string; plural: string; nth: number }
  /** right after this write of the operator, an admin deletes its object and creates it anew (same name, new uid) */
  | { kind: "recreate"; after: WriteSite }
  /** right after this write of the operator (lease mode), an admin takes its Lease, then gives it back */
  | { kind: "lease"; after: WriteSite }
  /** the operator's `nth` request of `verb` on `plural` is never answered: its client gives up (never made) */
  | { kind: "timeout"; verb: string; plural: string; nth: number };

export interface FaultKinds {
  /** a crash right after a write, or as a request (a read or a write) arrives */
  crash: boolean;
  delay: boolean;
  merge: boolean;
  /** 409/429/500/503 on a write, 429/500/503 on a read */
  errors: boolean;
  /** a 410 that forces a relist, the events in between lost */
  expire: boolean;
  /** a scenario object deleted and recreated under the same name while the operator works on it */
  recreate: boolean;
  /** the operator's Lease taken mid-handler, then given back (lease mode only: `peering: { mode: "lease" }`) */
  lease: boolean;
  /** a request never answered until the client gives up (off by default: each costs its deadline, 1 s of real time) */
  timeout: boolean;
}

export const FAULT_KINDS: readonly (keyof FaultKinds)[] = [
  "crash", "delay", "merge", "errors", "expire", "recreate", "lease", "timeout",
];

/** kinds on only when asked for */
const OFF_BY_DEFAULT: readonly (keyof FaultKinds)[] = ["timeout"];

/** every kind on, but those `faults` turns off; anything else in it is refused */
export function kindsOf(faults: Partial<FaultKinds> | undefined): FaultKinds {
  const on = (kind: keyof FaultKinds) => !OFF_BY_DEFAULT.includes(kind);
  const kinds = Object.fromEntries(FAULT_KINDS.map((kind) => [kind, on(kind)])) as unknown as FaultKinds;
  for (const [kind, on] of Object.entries(faults ?? {})) {
    if (!(FAULT_KINDS as readonly string[]).includes(kind)) {
      const known = FAULT_KINDS.join(", ");
      throw new Error(`simulate({ faults }): no fault kind ${JSON.stringify(kind)} (the kinds: ${known})`);
    }
    if (typeof on !== "boolean") throw new Error(`simulate({ faults }): ${kind} must be true or false, not ${on}`);
    kinds[kind as keyof FaultKinds] = on;
  }
  return kinds;
}

/** 1st, 2nd, 3rd, 4th, ... 11th, 12th, 13th, ... 21st, 22nd: a reconcile's status patches often pass 20 */
function ordinal(n: number): string {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  return `${n}${teen ? "th" : ["th", "st", "nd", "rd"][n % 10] ?? "th"}`;
}

export function describeSite(site: WriteSite | RequestSite): string {
  const resource = site.subresource ? `${site.plural}/${site.subresource}` : site.plural;
  return `its ${ordinal(site.nth)} ${site.verb} of ${resource}${site.name ? ` ${site.name}` : ""}`;
}

export function describeFault(fault: Fault): string {
  switch (fault.kind) {
    case "crash":
      return "after" in fault
        ? `the operator killed right after ${describeSite(fault.after)}, then restarted`
        : `the operator killed as ${describeSite(fault.before)} reached the API server (never served), then restarted`;
    case "delay": return `watch events of ${fault.plural} delivered ${fault.ms} ms late (a stale cache)`;
    case "merge":
      return `events of ${fault.plural} merged over steps ${fault.step}-${fault.step + 1} (only the latest state seen)`;
    case "expire":
      return `events of ${fault.plural} held over steps ${fault.step}-${fault.step + 1}, then its watches expired ` +
        "(410): the operator relists, the states in between never seen";
    case "error":
      return `the operator's ${ordinal(fault.nth)} ${fault.verb} of ${fault.plural} answered ${fault.status}` +
        (fault.status === 429 ? " (throttled, Retry-After: 0)" : "");
    case "recreate":
      return `right after ${describeSite(fault.after)}, an admin deleted ${fault.after.plural} ${fault.after.name} ` +
        "(its finalizers removed) and created it anew: same name and spec, a new uid";
    case "lease":
      return `right after ${describeSite(fault.after)}, an admin took the operator's Lease (it froze mid-handler), ` +
        "then gave it back";
    case "timeout":
      return `the operator's ${ordinal(fault.nth)} ${fault.verb} of ${fault.plural} never answered: its client gives ` +
        "up after its deadline, the request never made (a timeout)";
  }
}
