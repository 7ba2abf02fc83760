// API requests counted at the API server: kube-apiserver's audit log, one line per request as it
// arrives (stage RequestReceived only), read back per peer run by user agent. The operators
// under test and the bench all authenticate as the cluster's one admin, so the user agent is
// what tells them apart: the bench's own client says BENCH_USER_AGENT, the server's loopback
// clients say kube-…, everything else is the operator the run started.

import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const BENCH_USER_AGENT = "kobun-bench";

/** The kube-apiserver flags that write the audit log into `dir` (the policy file is written there too). */
export function auditArgs(dir: string): { args: string[]; logPath: string } {
  const policy = join(dir, "audit-policy.yaml");
  writeFileSync(policy, [
    "apiVersion: audit.k8s.io/v1",
    "kind: Policy",
    "omitStages: [ResponseStarted, ResponseComplete, Panic]",
    "rules:",
    "  - level: Metadata",
    "",
  ].join("\n"));
  const logPath = join(dir, "audit.log");
  return { args: [`--audit-policy-file=${policy}`, `--audit-log-path=${logPath}`, "--audit-log-maxsize=0", "--audit-log-format=json"], logPath };
}

/** Where the log ends now: requests from here on are the next run's. */
export function auditOffset(logPath: string): number {
  try {
    return statSync(logPath).size;
  } catch {
    return 0;
  }
}

export interface RequestCounts {
  /** Requests by the operator (every user agent but the bench's and the server's own). */
  total: number;
  /** The same by "verb resource[/subresource]", e.g. "patch benchparents/status". */
  byKind: Record<string, number>;
  userAgents: string[];
}

/** The operator's requests logged from `from` up to the log's end now. */
export async function requestsSince(logPath: string, from: number): Promise<RequestCounts> {
  const text = await Bun.file(logPath).slice(from, auditOffset(logPath)).text();
  const counts: RequestCounts = { total: 0, byKind: {}, userAgents: [] };
  const agents = new Set<string>();
  for (const line of text.split("\n")) {
    if (!line) continue;
    const event = JSON.parse(line) as { verb: string; userAgent?: string; objectRef?: { resource?: string; subresource?: string }; requestURI: string };
    const agent = event.userAgent ?? "";
    if (agent.startsWith(BENCH_USER_AGENT) || agent.startsWith("kube-")) continue;
    agents.add(agent);
    counts.total++;
    const ref = event.objectRef;
    const what = ref?.resource ? `${ref.resource}${ref.subresource ? `/${ref.subresource}` : ""}` : event.requestURI.split("?")[0]!;
    const kind = `${event.verb} ${what}`;
    counts.byKind[kind] = (counts.byKind[kind] ?? 0) + 1;
  }
  counts.userAgents = [...agents].sort();
  return counts;
}
