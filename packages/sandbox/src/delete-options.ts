// A DELETE's options as kube-apiserver reads them: the DeleteOptions of its body when it has
// one, else of its query (propagationPolicy, orphanDependents, gracePeriodSeconds, dryRun);
// ValidateDeleteOptions' refusals (422 DeleteOptions.meta.k8s.io); and the garbage collector's
// finalizers the store's delete leaves on the object (deletionFinalizersForGarbageCollection):
// "orphan" or "foregroundDeletion" as the options say, else as the object's finalizers already
// say; a second DELETE may swap them.

import { FOREGROUND, ORPHAN } from "./gc.ts";
import { optionsInvalid, queryBool, queryInt } from "./list-options.ts";

export interface DeleteOptions {
  propagationPolicy?: unknown;
  orphanDependents?: unknown;
  gracePeriodSeconds?: unknown;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: unknown;
}

/** the body's DeleteOptions, else the query's; refused (422) as ValidateDeleteOptions refuses them */
export function deleteOptionsOf(body: unknown, q: URLSearchParams): DeleteOptions {
  let options: DeleteOptions;
  if (typeof body === "object" && body !== null) options = body as DeleteOptions;
  else {
    const grace = queryInt(q, "gracePeriodSeconds");
    options = {
      ...q.has("propagationPolicy") ? { propagationPolicy: q.get("propagationPolicy") } : {},
      ...q.has("orphanDependents") ? { orphanDependents: queryBool(q.get("orphanDependents")) } : {},
      ...grace !== undefined ? { gracePeriodSeconds: grace } : {},
    };
  }
  const causes = [];
  const policy = options.propagationPolicy;
  const hasPolicy = policy !== undefined && policy !== null;
  if (hasPolicy && options.orphanDependents !== undefined && options.orphanDependents !== null) {
    causes.push({ reason: "FieldValueInvalid", field: "propagationPolicy",
      message: `Invalid value: ${JSON.stringify(policy)}: orphanDependents and deletionPropagation cannot be both ` +
        "set" });
  }
  if (hasPolicy && policy !== "Foreground" && policy !== "Background" && policy !== "Orphan") {
    causes.push({ reason: "FieldValueNotSupported", field: "propagationPolicy", message: `Unsupported value: ${
      JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan", "nil"` });
  }
  if (causes.length) throw optionsInvalid("DeleteOptions", causes);
  return options;
}

/** the finalizers a delete leaves (the collector's two as `options` and the object say), and whether they changed */
export function gcFinalizers(finalizers: string[], options: DeleteOptions | undefined): {
  finalizers: string[]; changed: boolean;
} {
  const orphan = typeof options?.orphanDependents === "boolean" ? options.orphanDependents : undefined;
  const policy = options?.propagationPolicy;
  const had = (f: string) => finalizers.includes(f);
  const orphaning = orphan ?? (policy === "Orphan" ? true : policy === "Background" || policy === "Foreground"
    ? false : had(ORPHAN));
  const foreground = orphan !== undefined ? false : policy === "Foreground" ? true
    : policy === "Background" || policy === "Orphan" ? false : had(FOREGROUND) && !had(ORPHAN);
  const next = [
    ...finalizers.filter((f) => f !== ORPHAN && f !== FOREGROUND),
    ...orphaning ? [ORPHAN] : [], ...foreground ? [FOREGROUND] : [],
  ];
  const same = new Set(next).size === new Set(finalizers).size && next.every(had);
  return { finalizers: same ? finalizers : next, changed: !same };
}
