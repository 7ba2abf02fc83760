// Small helpers the scenarios share: polling with a deadline, installing CRDs from YAML and
// waiting until they are served, unique namespaces, and raw watch streams.

import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import type { KubeClient } from "../../../src/kube/client.ts";
import type { KubeObject, Resource } from "../../../src/kube/types.ts";

export const CRDS: Resource = {
  group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions",
  kind: "CustomResourceDefinition", namespaced: false, statusSubresource: true,
};
export const NAMESPACES: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };
export const EVENTS: Resource = { group: "", version: "v1", plural: "events", kind: "Event", namespaced: true, statusSubresource: false };
export const EXAMPLES: Resource = {
  group: "kobun.dev", version: "v1", plural: "kobunexamples", kind: "KobunExample", namespaced: true, statusSubresource: true,
};
export const PEERINGS: Resource = {
  group: "kobun.dev", version: "v1", plural: "kobunpeerings", kind: "KobunPeering", namespaced: true, statusSubresource: false,
};
export const FLAKIES: Resource = {
  group: "e2e.kobun.dev", version: "v1", plural: "kobunflakies", kind: "KobunFlaky", namespaced: true, statusSubresource: false,
};
export const FLAKY_STATUSES: Resource = {
  group: "e2e.kobun.dev", version: "v1", plural: "kobunflakystatuses", kind: "KobunFlakyStatus", namespaced: true, statusSubresource: true,
};

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls `probe` every `intervalMs` until it returns something other than undefined/false,
 * or fails after `timeoutMs` with `what` and the last value/error seen.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 10_000, intervalMs = 50 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = undefined;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v as T;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${detail})`);
    }
    await sleep(intervalMs);
  }
}

/** The object, or undefined on 404. */
export async function getOrUndefined(client: KubeClient, r: Resource, ns: string | null, name: string): Promise<KubeObject | undefined> {
  try {
    return await client.get(r, ns, name);
  } catch (e) {
    if ((e as { code?: number }).code === 404) return undefined;
    throw e;
  }
}

let counter = 0;
/** A DNS-1123 name unique to this process: `<prefix>-<pid36>-<n>`. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid.toString(36)}-${(++counter).toString(36)}${Date.now().toString(36).slice(-3)}`;
}

const createdNamespaces = new Set<string>();

export async function createNamespace(client: KubeClient, prefix = "e2e", labels?: Record<string, string>): Promise<string> {
  const name = uniqueName(prefix);
  await client.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name, ...(labels ? { labels } : {}) } });
  createdNamespaces.add(name);
  return name;
}

/**
 * For a cluster the user named (KOBUN_E2E_KUBECONFIG): delete every namespace this process
 * created, after stripping finalizers from the suite's objects in them (no operator runs any
 * more to release them). Best effort: a throwaway control plane or sandbox needs none of this.
 */
export async function cleanupNamespaces(client: KubeClient, resources: Resource[]): Promise<void> {
  for (const ns of createdNamespaces) {
    for (const r of resources) {
      const items = await client.list(r, { namespace: ns }).then((l) => l.items, () => []);
      for (const o of items) {
        if (o.metadata.finalizers?.length) {
          await client.patch(r, ns, o.metadata.name!, { metadata: { finalizers: null } }, { type: "merge" }).catch(() => {});
        }
      }
    }
    await client.delete(NAMESPACES, null, ns).catch(() => {});
    createdNamespaces.delete(ns);
  }
}

/**
 * Creates (or keeps) every CRD in the YAML file, then waits until each is Established and its
 * resource answers a LIST: only then can an operator's first LIST succeed.
 */
export async function installCrds(client: KubeClient, path: string, timeoutMs = 30_000): Promise<void> {
  const docs = parseAllDocuments(readFileSync(path, "utf8")).map((d) => d.toJS()).filter((d) => d && d.kind === "CustomResourceDefinition");
  if (docs.length === 0) throw new Error(`${path}: no CustomResourceDefinition in it`);
  for (const crd of docs) {
    try {
      await client.create(CRDS, null, crd);
    } catch (e) {
      if ((e as { code?: number }).code !== 409) throw e;
    }
  }
  for (const crd of docs) {
    const name: string = crd.metadata.name;
    await eventually(`CRD ${name} Established`, async () => {
      const got = await client.get(CRDS, null, name);
      const conds: { type: string; status: string }[] = got.status?.conditions ?? [];
      return conds.some((c) => c.type === "Established" && c.status === "True");
    }, { timeoutMs });
    const served = crd.spec.versions.find((v: { served: boolean }) => v.served) ?? crd.spec.versions[0];
    const r: Resource = {
      group: crd.spec.group, version: served.name, plural: crd.spec.names.plural, kind: crd.spec.names.kind,
      namespaced: crd.spec.scope === "Namespaced", statusSubresource: false,
    };
    await eventually(`${name} served`, async () => (await client.list(r, { limit: 1 })) !== undefined, { timeoutMs });
  }
  client.invalidateDiscovery();
}

/** A request as a client sends it, JSON in (`contentType`), the Response as it came: for its status and Warning headers. */
export async function rawRequest(client: KubeClient, method: string, path: string, body: unknown, contentType = "application/json"): Promise<Response> {
  const headers = { ...(await client.connection.authHeaders()), "content-type": contentType };
  const tls = client.connection.tls;
  return fetch(`${client.server}${path}`, { method, headers, body: JSON.stringify(body), ...(tls ? { tls } : {}) } as RequestInit);
}

/** The texts of a response's `Warning: 299 - "..."` headers (joined by ", " as fetch joins them). */
export function warningsOf(response: Response): string[] {
  return (response.headers.get("warning") ?? "").split(/(?<="), (?=299 )/).filter(Boolean).map((w) => JSON.parse(w.replace(/^299 - /, "")) as string);
}

export interface RawLine {
  type: string;
  object: any;
}

/**
 * Opens a raw watch (`?watch=true&...query`) and collects its NDJSON events until the server
 * closes the stream, `until` is satisfied, or `timeoutMs` passes. Returns the events and how it ended.
 */
export async function rawWatch(
  client: KubeClient,
  path: string,
  query: Record<string, string>,
  { timeoutMs = 10_000, until, accept }: { timeoutMs?: number; until?: (ev: RawLine) => boolean; accept?: string } = {},
): Promise<{ events: RawLine[]; ended: "closed" | "until" | "timeout" }> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new Error("timeout")), timeoutMs);
  const events: RawLine[] = [];
  let ended: "closed" | "until" | "timeout" = "closed";
  try {
    // A real kube-apiserver answers 429 "storage is (re)initializing" (Retry-After: 1) to a
    // watch on a resource whose watch cache is not ready yet, e.g. just after its CRD became
    // served; a LIST works by then. Retry that within the deadline, as any client must.
    let res: Response;
    for (;;) {
      try {
        res = await client.stream(path, { watch: "true", ...query }, ac.signal, undefined, accept);
        break;
      } catch (e) {
        const err = e as { code?: number; retryAfter?: number };
        if (err.code !== 429 || ac.signal.aborted) throw e;
        await sleep(Math.min((err.retryAfter ?? 1) * 1000, 1000));
      }
    }
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line) continue;
        const ev = JSON.parse(line) as RawLine;
        events.push(ev);
        if (until?.(ev)) {
          ended = "until";
          ac.abort();
          return { events, ended };
        }
      }
    }
    if (buf.trim()) events.push(JSON.parse(buf) as RawLine);
  } catch (e) {
    if (!ac.signal.aborted) throw e;
    if (ended !== "until") ended = "timeout";
  } finally {
    clearTimeout(timer);
    ac.abort(); // a stream that ended by itself holds its stream-budget slot until its signal aborts
  }
  return { events, ended };
}
