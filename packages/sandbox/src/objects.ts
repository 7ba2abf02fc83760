// Write semantics of the API server for every resource: create, update (PUT), patch, delete,
// with the metadata rules kube-apiserver enforces — uid/creationTimestamp/generation,
// optimistic concurrency, status subresource isolation, no-op writes, finalizers and
// deletionTimestamp, namespace cascade, and CRD registration side effects.

import type { Collectable } from "./gc.ts";
import { clone, deepEqual } from "./patch.ts";
import { crdStatus, type ResourceDef, type ResourceRegistry } from "./resources.ts";
import { fromStored, storeKey, toStored } from "./event-store.ts";
import { checkObjectSize } from "./limits.ts";
import { strictlyUnknown, validateWrite } from "./validation.ts";
import { checkPatchDecodes, patchInvalid } from "./typed-decode.ts";
import { invalidError } from "./schema.ts";
import { allocate } from "./defaults.ts";
import { markedDeletionGeneration, updateGeneration } from "./generation.ts";
import { gcFinalizers } from "./delete-options.ts";
import { builtinSchemaName } from "./kube-schemas.ts";
import { recordUpdate, type Writer } from "./ownership.ts";
import {
  checkCreateBody, checkDeletePreconditions, checkNoResourceVersion, checkObjectBody, checkUpdateBody,
} from "./preconditions.ts";
import { schemaRootOf } from "./apply-shape.ts";
import {
  cascadeNamespace, checkNamespaceOpen, collectNamespace, isNamespaces, specFinalizers,
} from "./namespaces.ts";
import { ApiStatusError, errors } from "./status.ts";
import type { Store } from "./store.ts";
import {
  apiVersionOf, checkNoNewFinalizers, createdBody, nowTimestamp, patchedBody, present, requestedName, updatedBody,
} from "./write-bodies.ts";

/**
 * How a write is made: `strict` is fieldValidation=Strict (unknown fields of a custom resource
 * are a 400 instead of pruned); `writer` the field manager writing (ownership.ts; internal writes
 * name none); `dryRun` is dryRun=All: every check and default as for a real write, the answer
 * what would be stored, but nothing stored, no resourceVersion taken and no watch event sent
 * (kube-apiserver's DryRunnableStorage: a created object has no resourceVersion, an updated or
 * deleted one keeps the stored one).
 */
export interface WriteOptions {
  strict?: boolean;
  /** fieldValidation=Ignore: a built-in kind's unknown fields are dropped without a warning. */
  quiet?: boolean;
  writer?: Writer;
  dryRun?: boolean;
}

export class Objects implements Collectable {
  /** called when a CRD resource is removed, so its watches can be closed */
  onResourceRemoved: (def: ResourceDef) => void = () => {};

  constructor(readonly store: Store, readonly registry: ResourceRegistry) {}

  private key(def: ResourceDef): string {
    return storeKey(def);
  }

  has(def: ResourceDef, ns: string, name: string): boolean {
    return this.store.get(this.key(def), ns, name) !== undefined;
  }

  get(def: ResourceDef, ns: string, name: string): any {
    const obj = this.store.get(this.key(def), ns, name);
    if (!obj) throw errors.notFound(def.group, def.plural, name);
    return fromStored(def, obj);
  }

  /**
   * Store a write made through `def`, in the stored shape (event-store.ts: an Event's, whichever API wrote it);
   * the answer is what was stored, as `def` serves it.
   */
  private put(def: ResourceDef, ns: string, name: string, body: any, type: "ADDED" | "MODIFIED"): any {
    const prev = type === "MODIFIED" ? this.store.get(this.key(def), ns, name) : undefined;
    const stored = toStored(def, body);
    this.store.put(this.key(def), ns, name, stored, type, prev);
    return fromStored(def, stored);
  }

  private hasStatus(def: ResourceDef, version: string): boolean {
    return def.statusVersions.has(version);
  }

  create(
    def: ResourceDef, version: string, ns: string, input: any,
    { strict = false, quiet = false, writer, dryRun = false }: WriteOptions = {},
  ): any {
    checkCreateBody(def, ns, input);
    const meta = { ...(input.metadata ?? {}) };
    const name = requestedName(def, meta);
    checkNoResourceVersion(meta);
    checkNamespaceOpen(this, def, ns, name);
    if (this.store.get(this.key(def), ns, name)) throw errors.alreadyExists(def.group, def.plural, name);

    const body = createdBody(def, ns, name, input, meta, this.hasStatus(def, version));
    validateWrite(def, version, body, undefined, strict, quiet);
    this.recordOwnership(def, version, undefined, body, writer);
    if (body.metadata.managedFields?.length === 0) delete body.metadata.managedFields;
    allocate(def.group, def.plural, body, () => this.nextClusterIP());
    checkObjectSize(def.group, def.kind, body);
    if (dryRun) {
      if (def.plural === "customresourcedefinitions") body.status = crdStatus(body, body.metadata.creationTimestamp);
      return body;
    }
    let served: ResourceDef | undefined;
    if (def.plural === "customresourcedefinitions") {
      served = this.registry.registerCRD(body);
      body.status = crdStatus(body, body.metadata.creationTimestamp);
    }
    body.metadata.resourceVersion = String(this.store.nextRV());
    if (served) served.startRV = this.store.rv;
    return this.put(def, ns, name, body, "ADDED");
  }

  /** PUT and the common tail of PATCH */
  update(
    def: ResourceDef, version: string, ns: string, name: string, input: any, sub?: "status",
    { strict = false, quiet = false, writer, dryRun = false }: WriteOptions = {},
  ): any {
    checkObjectBody(input);
    const old = this.get(def, ns, name);
    checkUpdateBody(def, name, input, old);
    const statusful = this.hasStatus(def, version);
    const next = updatedBody(def, ns, name, old, input, sub, statusful);

    checkNoNewFinalizers(def, name, old, next);
    validateWrite(def, version, next, old, strict, quiet);
    this.recordOwnership(def, version, old, next, writer, sub);
    if (next.metadata.managedFields?.length === 0) delete next.metadata.managedFields;
    const specOf = (o: any) => {
      const { metadata: _m, status, kind: _k, apiVersion: _a, ...rest } = o;
      return statusful ? rest : { ...rest, status };
    };
    updateGeneration(def, old, next, !deepEqual(specOf(old), specOf(next)), sub === "status");
    if (deepEqual(old, next)) return old;
    checkObjectSize(def.group, def.kind, next);
    if (dryRun) return next;

    if (def.plural === "customresourcedefinitions" && sub !== "status") {
      this.registry.registerCRD(next);
    }
    next.metadata.resourceVersion = String(this.store.nextRV());
    // the registry's ShouldDeleteDuringUpdate (a Namespace's: and no spec finalizer left)
    const finalized = !(next.metadata.finalizers ?? []).length && !(isNamespaces(def) && specFinalizers(next).length);
    if (next.metadata.deletionTimestamp && finalized) {
      this.finalRemove(def, ns, name, next, false);
      return next;
    }
    return this.put(def, ns, name, next, "MODIFIED");
  }

  patch(
    def: ResourceDef, version: string, ns: string, name: string, contentType: string, patchBody: unknown,
    sub?: "status", options: WriteOptions = {},
  ): any {
    const patched = this.patched(def, version, ns, name, contentType, patchBody, undefined, options.strict);
    return this.update(def, version, ns, name, this.uidOfPatched(def, ns, name, patched, sub), sub, options);
  }

  /**
   * A PATCH's uid, as kube-apiserver takes it: a PATCH carries no UID precondition (only a PUT's
   * object does, refused with 409 by update()). Another uid than the stored one is an invalid
   * change of an immutable field (422) on the object, and is ignored on /status (the status
   * strategy keeps the stored metadata). A stale resourceVersion is refused first (409), as there.
   */
  uidOfPatched(def: ResourceDef, ns: string, name: string, patched: any, sub: "status" | undefined): any {
    const stored = this.get(def, ns, name).metadata;
    const { uid, resourceVersion } = patched.metadata ?? {};
    if (uid === undefined || uid === "" || uid === stored.uid) return patched;
    const stale = resourceVersion !== undefined && resourceVersion !== "" && resourceVersion !== stored.resourceVersion;
    if (stale) return patched;
    if (sub === "status") return { ...patched, metadata: { ...patched.metadata, uid: stored.uid } };
    const message = `Invalid value: ${JSON.stringify(uid)}: field is immutable`;
    const cause = { reason: "FieldValueInvalid", message, field: "metadata.uid" };
    const error = invalidError(def.group, def.kind, name, [cause]);
    if (!def.crdName) throw error;
    // A custom resource's metadata is validated twice on update (the generic check and the CRD's): the
    // message says it once, the causes list it twice.
    const details = { ...error.details, causes: [cause, { ...cause }] };
    throw new ApiStatusError(error.code, error.reason, error.message, details);
  }

  /** the writer's Update entry in managedFields (none when it changed nothing it did not own) */
  private recordOwnership(
    def: ResourceDef, version: string, old: any, next: any, writer: Writer | undefined, sub?: "status",
  ): void {
    if (writer === undefined) return;
    const subresource = writer.subresource ?? sub;
    const managed = recordUpdate(old, next, {
      manager: writer.manager, apiVersion: apiVersionOf(def, version), now: nowTimestamp(),
      statusful: this.hasStatus(def, version),
      schema: def.crdName ? undefined : builtinSchemaName(def.group, version, def.kind),
      ...(def.crdName ? { customSchema: schemaRootOf(def, version) } : {}), ...(subresource ? { subresource } : {}),
    });
    if (managed.length) next.metadata.managedFields = managed; else delete next.metadata.managedFields;
  }

  private clusterIPs = 0;
  /** Service cluster IPs in 10.0.0.0/24, test/cluster's --service-cluster-ip-range */
  private nextClusterIP(): string {
    return `10.0.0.${(this.clusterIPs++ % 240) + 10}`;
  }

  /** the object as the patch would leave it, not stored (admission sees it first); `current` as served at `version` */
  patched(
    def: ResourceDef, version: string, ns: string, name: string, contentType: string, patchBody: unknown,
    current = present(def, version, this.get(def, ns, name)), strict = false,
  ): any {
    const patched = patchedBody(def, contentType, patchBody, current);
    checkPatchDecodes(def, version, contentType, patched);
    // fieldValidation=Strict: the patched object's strict decoding fails, worded as a patch's
    const unknown = strict ? strictlyUnknown(def, version, patched) : [];
    if (unknown.length) {
      const why = `strict decoding error: ${unknown.map((f) => `unknown field "${f}"`).join(", ")}`;
      throw patchInvalid(def, contentType, patchBody, patched, why);
    }
    return patched;
  }

  /**
   * `dryRun`: the object as the delete would leave it (marked for deletion, or as it was), nothing changed. The
   * garbage collector's finalizers (delete-options.ts: it deletes dependents first, or orphans them) mark it too; a
   * DELETE of one already marked may change them (and, leaving none, remove it).
   */
  delete(def: ResourceDef, ns: string, name: string, options: any, dryRun = false): any {
    const obj = this.get(def, ns, name);
    const isNamespace = isNamespaces(def);
    checkDeletePreconditions(def, name, obj, options);
    const gc = gcFinalizers(obj.metadata.finalizers ?? [], options);
    if (obj.metadata.deletionTimestamp && !gc.changed) return obj;
    if (gc.finalizers.length || isNamespace) {
      const next = clone(obj);
      if (gc.changed && gc.finalizers.length) next.metadata.finalizers = gc.finalizers;
      else if (gc.changed) delete next.metadata.finalizers;
      if (!obj.metadata.deletionTimestamp) {
        next.metadata.deletionTimestamp = nowTimestamp();
        next.metadata.deletionGracePeriodSeconds = 0;
        const generation = markedDeletionGeneration(def, obj.metadata.generation);
        if (generation === undefined) delete next.metadata.generation; else next.metadata.generation = generation;
        if (isNamespace) next.status = { ...(next.status ?? {}), phase: "Terminating" };
      }
      if (dryRun) return next;
      next.metadata.resourceVersion = String(this.store.nextRV());
      const marked = this.put(def, ns, name, next, "MODIFIED");
      if (isNamespace && !obj.metadata.deletionTimestamp) {
        cascadeNamespace(this, name);
        collectNamespace(this, name);
      }
      return marked;
    }
    const final = clone(obj);
    if (gc.changed) delete final.metadata.finalizers;
    if (dryRun) return final;
    final.metadata.resourceVersion = String(this.store.nextRV());
    return this.finalRemove(def, ns, name, final, true);
  }

  /** The garbage collector's delete (gc.ts): by resource key. */
  deleteWithPolicy(res: string, ns: string, name: string, policy: "Background" | "Foreground"): void {
    const def = this.registry.byKey(res);
    if (def) this.delete(def, ns, name, { propagationPolicy: policy });
  }

  /** The garbage collector's metadata writes (owner references, its finalizers), through the usual update rules. */
  writeMetadata(res: string, ns: string, name: string, change: (meta: any) => void): void {
    const def = this.registry.byKey(res);
    if (!def) return;
    const next = clone(this.get(def, ns, name));
    change(next.metadata);
    const version = def.versions[0]!;
    this.update(def, version, ns, name, present(def, version, next));
  }

  /** remove for good; `final` already carries its new resourceVersion */
  private finalRemove(def: ResourceDef, ns: string, name: string, final: any, _explicit: boolean): any {
    if (def.plural === "customresourcedefinitions") this.removeCRDResource(name);
    this.store.remove(this.key(def), ns, name, toStored(def, final));
    if (def.namespaced) collectNamespace(this, ns);
    else if (isNamespaces(def)) cascadeNamespace(this, name);
    return final;
  }

  private removeCRDResource(crdName: string): void {
    const gone = this.registry.unregisterCRD(crdName);
    if (!gone) return;
    const key = this.key(gone);
    for (const { body } of this.store.list(key)) {
      const final = clone(body);
      final.metadata.resourceVersion = String(this.store.nextRV());
      this.store.remove(key, body.metadata.namespace ?? "", body.metadata.name, final);
    }
    this.store.dropResource(key);
    this.onResourceRemoved(gone);
  }
}
