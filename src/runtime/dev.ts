// `kobun dev`: the embedded sandbox, the handlers' CRDs installed into it, and the `--demo`
// walk-through that creates, updates and deletes each sample object (`*.sample.yaml`) so a
// newcomer sees the example operator react without a cluster or kubectl.
// Loaded only by that command, so `kobun run` never loads the sandbox.

import type { KubeClient } from "../kube/index.ts";
import { isConflict, isNotFound } from "../kube/index.ts";
import type { KubeObject, Resource } from "../kube/index.ts";
import { sleep } from "../util/index.ts";
import type { Logger } from "../util/index.ts";
import { readBookkeeping } from "../handling/index.ts";
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
  client: KubeClient, manifests: Manifest[], logger: Logger, signal: AbortSignal,
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
    const show = (step: string, object: KubeObject) =>
      console.log(`demo: ${step} ${sample.kind}/${name}: status=${JSON.stringify(object.status ?? {})}`);

    await client.create(resource, ns, sample, { signal });
    show("created", await waitFor(at, signal, (o) => handled(o, "spec") !== undefined));

    const updated = await demoUpdate(at, signal);
    show("updated", await waitFor(at, signal, updated));

    await client.delete(resource, ns, name, { signal });
    await waitFor(at, signal, () => false);
    console.log(`demo: deleted ${sample.kind}/${name}: gone (finalizer released)`);
  }
  return true;
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
  { client, resource, ns, name }: SampleAt, signal: AbortSignal, done: (o: KubeObject) => boolean,
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
  throw new Error(`timed out waiting for ${resource.plural}/${name}`);
}

/** Kind → plural the way CRDs conventionally name them (the demo's samples follow it). */
function pluralOf(kind: string): string {
  const lower = kind.toLowerCase();
  return lower.endsWith("s") ? `${lower}es` : lower.endsWith("y") ? `${lower.slice(0, -1)}ies` : `${lower}s`;
}
