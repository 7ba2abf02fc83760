// `kobun dev`: the embedded sandbox, the handlers' CRDs installed into it, and the `--demo`
// walk-through that creates, updates and deletes each sample object (`*.sample.yaml`) so a
// newcomer sees the example operator react without a cluster or kubectl.
// Each step waits for what the operator writes to that object, by what its handlers declare
// (demoWaits): the diff base a create/update/delete/field handler's cycle stores, or else the
// finalizer a daemon, timer or reconcile (`finalizer: true`) holds; for handlers that write nothing
// of kobun's own (on.event, on.index, on.reconcile without a finalizer) it waits for nothing, and says so.
// Loaded only by that command, so `kobun run` never loads the sandbox.

import type { KubeClient } from "../kube/index.ts";
import { isConflict, isNotFound } from "../kube/index.ts";
import type { KubeObject, Resource } from "../kube/index.ts";
import { sleep } from "../util/index.ts";
import type { Logger } from "../util/index.ts";
import { readBookkeeping } from "../handling/index.ts";
import { FINALIZER, registry as defaultRegistry, selectorMatches, type Registry } from "../declaring/index.ts";
import { parseSelector } from "../kube/index.ts";
import { manifestObjects, type Manifest } from "./manifests.ts";

export { startSandbox } from "@kobun/sandbox";

const crdResource: Resource = {
  group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions",
  kind: "CustomResourceDefinition", namespaced: false, statusSubresource: true,
};

/** Creates the CRDs among the manifests (existing ones are left as they are); returns their names. */
export async function applyManifests(
  client: KubeClient, manifests: Manifest[], logger: Logger, signal: AbortSignal,
): Promise<string[]> {
  const names: string[] = [];
  for (const object of manifestObjects(manifests, "definitions")) {
    if (object.kind !== "CustomResourceDefinition") {
      const skipped = { kind: object.kind, name: object.metadata?.name };
      logger.warn("kobun dev installs only CustomResourceDefinitions from the handlers directory; skipped", skipped);
      continue;
    }
    try {
      await client.create(crdResource, null, object, { signal });
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
    names.push(object.metadata.name ?? "?");
  }
  return names;
}

/** Creates, updates and deletes each sample, printing what the operator did. True if all went as expected. */
export async function runDemo(
  client: KubeClient, manifests: Manifest[], logger: Logger, signal: AbortSignal, registry: Registry = defaultRegistry,
): Promise<boolean> {
  const samples = manifestObjects(manifests, "samples");
  if (samples.length === 0) {
    logger.warn("no *.sample.yaml objects in the handlers directory: nothing to demonstrate");
    return true;
  }
  const crds = manifestObjects(manifests, "definitions").filter((o) => o.kind === "CustomResourceDefinition");
  for (const sample of samples) {
    const [group = "", version = "v1"] = (sample.apiVersion ?? "v1").includes("/")
      ? sample.apiVersion!.split("/")
      : ["", sample.apiVersion];
    // The plural its CRD declares; the English rule only for kinds without a CRD here.
    const definition = crds.find((c) => c.spec?.group === group && c.spec?.names?.kind === sample.kind);
    const declared = definition?.spec?.names?.plural as string | undefined;
    const plural = declared ?? pluralOf(sample.kind ?? "");
    const resource = await client.resolve({ group, version, plural }, { signal });
    const ns = resource.namespaced ? (sample.metadata.namespace ?? "default") : null;
    const name = sample.metadata.name!;
    const at: SampleAt = { client, resource, ns, name };
    const waits = demoWaits(registry, resource);
    const show = (step: string, object: KubeObject, note = "") =>
      console.log(`demo: ${step} ${sample.kind}/${name}: status=${JSON.stringify(object.status ?? {})}${note}`);

    const created = await client.create(resource, ns, sample, { signal }).catch((error: unknown) => {
      // Most often a schema changed and its sample not (a new required field): say which object to fix.
      const why = error instanceof Error ? error.message : String(error);
      throw new Error(`the sample ${sample.kind}/${name} (a *.sample.yaml beside the handlers) was refused: ${why}`,
        { cause: error });
    });
    if (waits.created) show("created", await waitFor(at, signal, waits.created, waits.what));
    else show("created", created, ` (not waited for: ${waits.what})`);

    const updated = await demoUpdate(at, signal);
    if (waits.changes) show("updated", await waitFor(at, signal, updated, "the diff base of the update"));
    else show("updated", await client.get(resource, ns, name, { signal }), " (not waited for: no change handler)");

    // "finalizer released" only where kobun held one: an operator of events or indexes holds none.
    const held = (await client.get(resource, ns, name, { signal })).metadata.finalizers?.includes(FINALIZER);
    await client.delete(resource, ns, name, { signal });
    await waitFor(at, signal, () => false, "the object to be gone (the operator releases its finalizer)");
    console.log(`demo: deleted ${sample.kind}/${name}: gone${held ? " (finalizer released)" : ""}`);
  }
  return true;
}

/**
 * What the demo waits for after creating an object of `resource`, by what the operator declares
 * for it: `created` undefined when its handlers write nothing kobun can await (said in `what`);
 * `changes`: change handlers run, so the update step is shown with its diff base.
 */
export function demoWaits(
  registry: Registry, resource: Resource,
): { created?: (o: KubeObject) => boolean; what: string; changes: boolean } {
  const matches = (selector: Parameters<typeof parseSelector>[0]) => selectorMatches(parseSelector(selector), resource);
  const handlers = registry.forResource(resource);
  if (handlers.some((h) => h.kind !== "event")) {
    const what = "the diff base its create/update/delete/field handlers' cycle stores";
    return { created: (o) => handled(o, "spec") !== undefined, what, changes: true };
  }
  // A reconcile with `finalizer: true` holds kobun's finalizer as daemons and timers do: awaited, the
  // demo shows the operator at work and its deletion shows the cleanup (not a deletion it never saw).
  const holders = [
    registry.background.some((spec) => matches(spec.selector)) ? "daemons and timers" : "",
    registry.reconciles.forResource(resource)?.finalizer ? "on.reconcile (finalizer: true)" : "",
  ].filter(Boolean);
  if (holders.length > 0) {
    const holds = (o: KubeObject) => o.metadata.finalizers?.includes(FINALIZER) ?? false;
    return { created: holds, what: `the finalizer its ${holders.join(" and ")} hold`, changes: false };
  }
  const kinds = [
    handlers.length > 0 ? "on.event" : "",
    registry.indexes.some((spec) => matches(spec.selector)) ? "on.index" : "",
    registry.reconciles.specs.some((spec) => matches(spec.selector)) ? "on.reconcile" : "",
  ].filter(Boolean);
  const what = kinds.length > 0
    ? `its handlers (${kinds.join(", ")}) write nothing of kobun's to ${resource.plural} to wait for`
    : `no handler is registered for ${resource.plural}: nothing to wait for`;
  return { what, changes: false };
}

/** Where a sample object lives: the client that reaches it, its resource, namespace and name. */
interface SampleAt {
  client: KubeClient;
  resource: Resource;
  ns: string | null;
  name: string;
}

/**
 * The update step: sets `spec.demo`, or, when the CRD's schema prunes that field (a strict
 * schema keeps only the fields it declares), a `demo` label, which every schema keeps. Returns
 * the test for "the operator has handled this change".
 */
async function demoUpdate(
  { client, resource, ns, name }: SampleAt, signal: AbortSignal,
): Promise<(o: KubeObject) => boolean> {
  const when = new Date();
  const demo = `updated at ${when.toISOString()}`;
  const answer = await client.patch(resource, ns, name, { spec: { demo } }, { signal });
  if ((answer.spec as Record<string, unknown> | undefined)?.demo === demo) {
    return (o) => handled(o, "spec")?.demo === demo;
  }
  const label = `updated-${when.getTime()}`;
  await client.patch(resource, ns, name, { metadata: { labels: { demo: label } } }, { signal });
  return (o) => (handled(o, "metadata")?.labels as Record<string, string> | undefined)?.demo === label;
}

/** A part of the object as the operator last handled it (its diff base), wherever the engine keeps it. */
function handled(object: KubeObject, part: "spec" | "metadata"): Record<string, unknown> | undefined {
  const base = readBookkeeping(object, []).base;
  return typeof base === "object" ? ((base[part] as Record<string, unknown> | undefined) ?? {}) : undefined;
}

/** Polls until `done(object)` holds, or the object is gone (resolves with the last seen body). */
async function waitFor(
  { client, resource, ns, name }: SampleAt, signal: AbortSignal, done: (o: KubeObject) => boolean, what: string,
): Promise<KubeObject> {
  let last: KubeObject = { metadata: { name } };
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && !signal.aborted) {
    try {
      last = await client.get(resource, ns, name, { signal });
      if (done(last)) return last;
    } catch (error) {
      if (isNotFound(error)) return last;
      throw error;
    }
    await sleep(50, signal);
  }
  throw new Error(`timed out after 30 s waiting for ${resource.plural}/${name}: for ${what}`);
}

/** Kind → plural the way CRDs conventionally name them (the demo's samples follow it). */
function pluralOf(kind: string): string {
  const lower = kind.toLowerCase();
  return lower.endsWith("s") ? `${lower}es` : lower.endsWith("y") ? `${lower.slice(0, -1)}ies` : `${lower}s`;
}
