// The faults of one simulated run as they are armed on the sandbox (delays, failed requests) and
// as they strike while it runs: a crash right after a chosen write or as a chosen request
// arrives, a delete-and-recreate or the Lease taken after a chosen write, watches held and then
// merged or expired around the scenario's steps. The sandbox tells of every request and write, which name the
// resources to compare and, for the operator's, the points faults strike at.

import type { Sandbox } from "@kobun/sandbox";
import type { KubeClient } from "../kube/index.ts";
import { clock } from "../util/index.ts";
import type { Resources } from "./simulate-checks.ts";
import { INSTANCE_PREFIX, type Operators, type QuietWatch } from "./simulate-operators.ts";
import { takeLease } from "./simulate-lease.ts";
import { recreateObject } from "./simulate-recreate.ts";
import { describeSite, type Fault, type RequestSite, type WriteSite } from "./simulate-schedule.ts";

/** resources whose writes are no crash points: posted in the background, about what was done */
const NOT_CRASH_POINTS = new Set(["events"]);
/** the operator's own Lease (lease mode): renewed on the machine's clock, so never a fault point nor compared */
const LEASES = "leases";

/** where faults can strike, found in a run (the reference run's name the next runs' faults) */
export interface FaultPoints {
  /** the operator's requests (not watches), in order */
  requests: RequestSite[];
  /** its writes on objects the scenario made (not the operator): where a delete-and-recreate strikes */
  recreatable: WriteSite[];
}

export interface Listening {
  sites: WriteSite[];
  points: FaultPoints;
  resources: Map<string, Resources>;
  story: string[];
  operators: Operators;
  quiet: QuietWatch;
  /** the admin's client: what recreates an object, takes the Lease */
  admin: KubeClient;
  /** the operator's log lines (the lease fault waits for its "lost the lease") */
  logs: { readonly lines: readonly string[] };
  /** where the operator's Lease is (lease mode) */
  lease: { namespace: string; name: string };
}

type Struck<K extends Fault["kind"], P extends string> = Extract<Fault, { kind: K } & Record<P, unknown>>;

/** every write is activity and names a resource to compare; the operator's are fault points */
export function listenToWrites(sandbox: Sandbox, faults: Fault[], into: Listening): void {
  const crashes = faults.filter((f): f is Struck<"crash", "after"> => f.kind === "crash" && "after" in f);
  const recreates = faults.filter((f): f is Struck<"recreate", "after"> => f.kind === "recreate");
  const leases = faults.filter((f): f is Struck<"lease", "after"> => f.kind === "lease");
  const counts = new Map<string, number>();
  /** objects by who wrote them first: true, the scenario (an admin); false, the operator */
  const scenarioMade = new Map<string, boolean>();
  listenToRequests(sandbox, faults, into);
  sandbox.faults.clients.onWrite((write) => {
    into.quiet.activity();
    if (write.failed !== undefined) {
      // its retry is a timer on the run's virtual clock (the client's Retry-After wait, a request in flight, is
      // work on it): the settle fires it
      into.story.push(`  the operator's ${write.verb} of ${write.plural} answered ${write.failed} (injected)`);
      return;
    }
    if (write.plural === LEASES && write.group === "coordination.k8s.io") return;
    into.resources.set(`${write.group}/${write.plural}`, { group: write.group, plural: write.plural });
    const object = `${write.group}/${write.plural} ${write.namespace}/${write.name}`;
    const operator = write.client.startsWith(INSTANCE_PREFIX);
    if (!scenarioMade.has(object)) scenarioMade.set(object, !operator);
    if (!operator || NOT_CRASH_POINTS.has(write.plural)) return;
    const site = siteOf(write, counts);
    into.sites.push(site);
    if (scenarioMade.get(object) && !deleting(sandbox, write)) into.points.recreatable.push(site);
    if (write.client !== into.operators.current) return;
    const recreate = recreates.find((r) => sameSite(r.after, site));
    if (recreate !== undefined) {
      recreates.splice(recreates.indexOf(recreate), 1);
      into.story.push(`  operator write #${into.sites.length}, ${describeSite(site)}: the object is recreated`);
      // work on the run's clock until the object is made again: the settle then waits for what it sets off
      const done = clock().working();
      void recreateObject(sandbox, into.admin, write, into).finally(done);
    }
    const lease = leases.find((l) => sameSite(l.after, site));
    if (lease !== undefined) {
      leases.splice(leases.indexOf(lease), 1);
      into.story.push(`  operator write #${into.sites.length}, ${describeSite(site)}: its Lease is taken`);
      const done = clock().working();
      void takeLease(into.admin, into.lease.namespace, into.lease.name, into).finally(done);
    }
    const crash = crashes.find((c) => sameSite(c.after, site));
    if (crash === undefined) return;
    crashes.splice(crashes.indexOf(crash), 1);
    const instance = write.client.slice(INSTANCE_PREFIX.length);
    into.story.push(`  operator write #${into.sites.length}, ${describeSite(site)}: instance ${instance} killed ` +
      `here; instance ${into.operators.count + 1} starts`);
    into.operators.kill();
  });
}

/** the operator's requests as they arrive (watches aside) are named; a chosen one kills it before it is served */
function listenToRequests(sandbox: Sandbox, faults: Fault[], into: Listening): void {
  const crashes = faults.filter((f): f is Struck<"crash", "before"> => f.kind === "crash" && "before" in f);
  const counts = new Map<string, number>();
  sandbox.faults.clients.onRequest((client, verb, target) => {
    if (!client.startsWith(INSTANCE_PREFIX) || target === undefined || verb === "watch") return;
    if (NOT_CRASH_POINTS.has(target.plural) || target.plural === LEASES) return;
    if (sandbox.faults.clients.isCutOff(client)) return;
    const key = `${verb} ${target.plural}/${target.subresource ?? ""} ${target.name}`;
    const nth = (counts.get(key) ?? 0) + 1;
    counts.set(key, nth);
    const site: RequestSite = {
      verb, plural: target.plural, name: target.name, nth,
      ...(target.subresource ? { subresource: target.subresource } : {}),
    };
    into.points.requests.push(site);
    const crash = crashes.find((c) => sameSite(c.before, site));
    if (crash === undefined || client !== into.operators.current) return;
    crashes.splice(crashes.indexOf(crash), 1);
    const instance = client.slice(INSTANCE_PREFIX.length);
    into.story.push(`  operator request #${into.points.requests.length}, ${describeSite(site)}: instance ${instance} ` +
      `killed as it arrives (never served); instance ${into.operators.count + 1} starts`);
    into.operators.kill(); // the sandbox now refuses this very request: the instance died awaiting it
  });
}

function siteOf(write: { verb: string; plural: string; subresource?: string; name: string; generateName?: string },
  counts: Map<string, number>): WriteSite {
  const name = write.generateName ? `${write.generateName}*` : write.name;
  const key = `${write.verb} ${write.plural}/${write.subresource ?? ""} ${name}`;
  const nth = (counts.get(key) ?? 0) + 1;
  counts.set(key, nth);
  const subresource = write.subresource ? { subresource: write.subresource } : {};
  return { verb: write.verb, plural: write.plural, name, nth, ...subresource };
}

/** whether the object is being deleted: what the scenario asked for, which a recreate would undo */
function deleting(sandbox: Sandbox, write: { group: string; plural: string; namespace: string; name: string }) {
  return !!sandbox.store.get(write.group, write.plural, write.namespace || undefined, write.name)?.metadata
    ?.deletionTimestamp;
}

function sameSite(a: WriteSite | RequestSite, b: WriteSite | RequestSite): boolean {
  return a.verb === b.verb && a.plural === b.plural && (a.subresource ?? "") === (b.subresource ?? "") &&
    a.name === b.name && a.nth === b.nth;
}

/** the faults set up before the operator starts: delays, and chosen requests failed */
export function armFaults(sandbox: Sandbox, faults: Fault[]): void {
  for (const fault of faults) {
    if (fault.kind === "delay") sandbox.faults.delayWatches(fault.ms, { plural: fault.plural });
    if (fault.kind === "timeout") {
      // held past the instance's request deadline (TIMEOUT_CLIENT_MS): it gives up, and the request is never made
      sandbox.faults.stallNext(1, 60_000, {
        client: INSTANCE_PREFIX, verb: fault.verb, plural: fault.plural, skip: fault.nth - 1, unserved: true,
      });
    }
    if (fault.kind === "error") {
      // Retry-After: 0 — the client's wait for it is on the machine's clock; the refusal and the retry still happen
      sandbox.faults.clients.failRequests({
        clientPrefix: INSTANCE_PREFIX, status: fault.status, verb: fault.verb, plural: fault.plural,
        skip: fault.nth - 1, retryAfterSeconds: 0,
      });
    }
  }
}

/** before scenario step `step` changes anything: the watches a merge or an expiry holds from here on */
export function holdWatches(sandbox: Sandbox, faults: Fault[], step: number): void {
  for (const fault of faults) {
    if ((fault.kind === "merge" || fault.kind === "expire") && fault.step === step) {
      sandbox.faults.mergeWatches({ plural: fault.plural });
    }
  }
}

/** whether a merge or an expiry ends with step `step` (the operator first settles on its stale view) */
export function holdEndsAt(faults: Fault[], step: number): boolean {
  return faults.some((f) => (f.kind === "merge" || f.kind === "expire") && f.step + 1 === step);
}

/**
 * what a check after step `step` is told of the merges and expiries that hold events back across it: the operator
 * has not seen that step's changes of those resources yet
 */
export function heldAcross(faults: Fault[], step: number): string[] {
  return faults.flatMap((f) => (f.kind === "merge" || f.kind === "expire") && f.step === step
    ? [`events of ${f.plural} held back at this check (the ${f.kind} over steps ${step}-${step + 1}): the operator ` +
      `had not seen this step's changes of ${f.plural}; an invariant must hold whatever the operator has seen ` +
      "(a check that it has acted belongs at the end)"]
    : []);
}

/** an expiry ending with step `step`: its resource's watches get ERROR 410, what they held is lost, they relist */
export function expireHeld(sandbox: Sandbox, faults: Fault[], step: number, story: string[]): void {
  for (const fault of faults) {
    if (fault.kind !== "expire" || fault.step + 1 !== step) continue;
    const lost = sandbox.faults.pendingMerged();
    sandbox.faults.expireWatches({ plural: fault.plural });
    const events = lost === 1 ? "1 held event" : `${lost} held events`;
    story.push(`  the watches of ${fault.plural} expire (410 Gone), ${events} never delivered: the operator relists`);
  }
}
