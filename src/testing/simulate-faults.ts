// The faults of one simulated run as they are armed on the sandbox (delays, failed writes) and
// as they strike while it runs (a crash right after a chosen write): the sandbox tells of every
// write, which names the resources to compare and, for the operator's, the crash points.

import type { Sandbox } from "@kobun/sandbox";
import type { Resources } from "./simulate-checks.ts";
import { INSTANCE_PREFIX, type Operators, type QuietWatch } from "./simulate-operators.ts";
import { describeSite, type Fault, type WriteSite } from "./simulate-schedule.ts";

/** resources whose writes are no crash points: posted in the background, about what was done */
const NOT_CRASH_POINTS = new Set(["events"]);

export interface Listening {
  sites: WriteSite[];
  resources: Map<string, Resources>;
  story: string[];
  operators: Operators;
  quiet: QuietWatch;
}

/** every write is activity and names a resource to compare; the operator's are crash points */
export function listenToWrites(sandbox: Sandbox, faults: Fault[], into: Listening): void {
  const crashes = faults.filter((f): f is Extract<Fault, { kind: "crash" }> => f.kind === "crash");
  const counts = new Map<string, number>();
  sandbox.faults.clients.onWrite((write) => {
    into.quiet.activity();
    if (write.failed !== undefined) {
      // its retry is a timer on the run's virtual clock: the settle fires it
      into.story.push(`  the operator's ${write.verb} of ${write.plural} answered ${write.failed} (injected)`);
      return;
    }
    into.resources.set(`${write.group}/${write.plural}`, { group: write.group, plural: write.plural });
    if (!write.client.startsWith(INSTANCE_PREFIX) || NOT_CRASH_POINTS.has(write.plural)) return;
    const name = write.generateName ? `${write.generateName}*` : write.name;
    const key = `${write.verb} ${write.plural}/${write.subresource ?? ""} ${name}`;
    const nth = (counts.get(key) ?? 0) + 1;
    counts.set(key, nth);
    const site: WriteSite = {
      verb: write.verb, plural: write.plural, name, nth,
      ...(write.subresource ? { subresource: write.subresource } : {}),
    };
    into.sites.push(site);
    const crash = crashes.find((c) => sameSite(c.after, site));
    if (crash === undefined || write.client !== into.operators.current) return;
    crashes.splice(crashes.indexOf(crash), 1);
    const instance = write.client.slice(INSTANCE_PREFIX.length);
    into.story.push(`  operator write #${into.sites.length}, ${describeSite(site)}: instance ${instance} killed ` +
      `here; instance ${into.operators.count + 1} starts`);
    into.operators.kill();
  });
}

function sameSite(a: WriteSite, b: WriteSite): boolean {
  return a.verb === b.verb && a.plural === b.plural && (a.subresource ?? "") === (b.subresource ?? "") &&
    a.name === b.name && a.nth === b.nth;
}

/** the faults set up before the operator starts: delays, and chosen writes failed */
export function armFaults(sandbox: Sandbox, faults: Fault[]): void {
  for (const fault of faults) {
    if (fault.kind === "delay") sandbox.faults.delayWatches(fault.ms, { plural: fault.plural });
    if (fault.kind === "error") {
      sandbox.faults.clients.failWrites({
        clientPrefix: INSTANCE_PREFIX, status: fault.status, verb: fault.verb, plural: fault.plural,
        skip: fault.nth - 1,
      });
    }
  }
}

