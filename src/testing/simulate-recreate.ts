// The delete-and-recreate fault: while the operator works on an object the scenario made, an
// admin deletes it (its finalizers removed, so it is really gone, its children left to the
// garbage collector) and creates it anew under the same name, with what the scenario last applied
// (a new uid). An operator that takes the new object for the old one (acts on the old one's
// intent, keeps the old one's child) then fails to converge with the reference run.

import type { Sandbox } from "@kobun/sandbox";
import { ApiError, type KubeClient } from "../kube/index.ts";
import type { QuietWatch } from "./simulate-operators.ts";

/** the field manager of the scenario's applies (TestOperator.apply): what it applied is the object's intent */
const SCENARIO_MANAGER = "kobun-testing";

interface Target { group: string; plural: string; namespace: string; name: string }

/** deletes the object and makes it anew; tells the story of it (a failure too: the run goes on) */
export async function recreateObject(
  sandbox: Sandbox, admin: KubeClient, target: Target, into: { story: string[]; quiet: QuietWatch },
): Promise<void> {
  const { group, plural, namespace, name } = target;
  const old = sandbox.store.get(group, plural, namespace || undefined, name);
  const where = `${plural} ${namespace ? `${namespace}/` : ""}${name}`;
  if (old === undefined) {
    into.story.push(`  ${where} is gone already: nothing to recreate`);
    return;
  }
  if (old.metadata?.deletionTimestamp) {
    into.story.push(`  ${where} is being deleted (as the scenario asked): not recreated`);
    return;
  }
  const manifest = appliedPart(old);
  try {
    const resource = await admin.resolve(`${old.apiVersion}/${plural}`);
    const ns = resource.namespaced ? namespace : null;
    // Finalizers first, then the delete: it is gone at once, and the operator never sees it being deleted (a
    // deletion mark first would race its delete handler against the stripping). A finalizer it puts back in
    // between is stripped again.
    for (let tries = 0; tries < 10; tries++) {
      const now = sandbox.store.get(group, plural, namespace || undefined, name);
      if (now === undefined || now.metadata?.uid !== old.metadata?.uid) break;
      into.quiet.activity();
      await admin.patch(resource, ns, name, { metadata: { finalizers: null } }).catch(unlessGone);
      await admin.delete(resource, ns, name).catch(unlessGone);
    }
    const made = await admin.apply(resource, ns, name, manifest, { fieldManager: SCENARIO_MANAGER, force: true });
    // the controllers the scenario plays (world.patchStatus) write their status on the new object too
    const status = scenarioStatus(old);
    if (status !== undefined) {
      await admin.patch(resource, ns, name, { status }, { subresource: "status", fieldManager: SCENARIO_MANAGER });
    }
    into.story.push(`  ${where} deleted (finalizers removed) and created anew by an admin: ` +
      `uid ${old.metadata?.uid} → ${made.metadata?.uid}`);
  } catch (error) {
    into.story.push(`  ${where} could not be recreated: ${(error as Error)?.message ?? error}`);
  } finally {
    into.quiet.activity();
  }
}

function unlessGone(error: unknown): void {
  if (!(error instanceof ApiError && error.code === 404)) throw error;
}

/**
 * What the scenario applied of the object: the top-level fields its field manager owns (spec and
 * the like, whole) and its labels and annotations; the object's own spec when it applied none.
 */
export function appliedPart(object: any): any {
  const meta = object.metadata ?? {};
  const entry = (meta.managedFields ?? []).find((field: any) =>
    field.manager === SCENARIO_MANAGER && field.operation === "Apply" && !field.subresource);
  const owned: Record<string, any> = entry?.fieldsV1 ?? { "f:spec": {} };
  const manifest: any = { apiVersion: object.apiVersion, kind: object.kind, metadata: { name: meta.name } };
  if (meta.namespace) manifest.metadata.namespace = meta.namespace;
  for (const key of Object.keys(owned)) {
    const field = key.slice(2);
    if (!key.startsWith("f:") || ["apiVersion", "kind", "metadata", "status"].includes(field)) continue;
    if (object[field] !== undefined) manifest[field] = object[field];
  }
  for (const map of ["labels", "annotations"] as const) {
    const keys = Object.keys(owned["f:metadata"]?.[`f:${map}`] ?? {}).map((key) => key.slice(2));
    const kept = Object.fromEntries(keys.filter((key) => meta[map]?.[key] !== undefined).map((k) => [k, meta[map][k]]));
    if (Object.keys(kept).length > 0) manifest.metadata[map] = kept;
  }
  return manifest;
}

/** the status fields the scenario wrote (world.patchStatus: its manager's updates of the status subresource) */
function scenarioStatus(object: any): Record<string, unknown> | undefined {
  const entries = (object.metadata?.managedFields ?? []).filter((field: any) =>
    field.manager === SCENARIO_MANAGER && field.subresource === "status");
  const keys = new Set<string>(entries.flatMap((entry: any) => Object.keys(entry.fieldsV1?.["f:status"] ?? {})));
  const status = Object.fromEntries([...keys].filter((key) => key.startsWith("f:"))
    .map((key) => key.slice(2)).filter((field) => object.status?.[field] !== undefined)
    .map((field) => [field, object.status[field]]));
  return Object.keys(status).length > 0 ? status : undefined;
}
