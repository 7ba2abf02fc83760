// Metadata-only answers (`Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`),
// as kube-apiserver v1.37 gives them, checked against it by test/e2e/resources-more.e2e.ts:
// - a GET asks for PartialObjectMetadata, a LIST for PartialObjectMetadataList; each object is
//   { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/<v>", metadata } (managedFields
//   included), the list { kind: "PartialObjectMetadataList", apiVersion, metadata, items };
// - the other one of the pair is 406 NotAcceptable ("you requested …, but the requested object
//   is (not) a list (*core.ConfigMapList)"); v1beta1 works as v1 does; another version is 406
//   unless a later alternative of the Accept header is acceptable;
// - a WATCH asks for PartialObjectMetadata: events and BOOKMARKs carry it (ERROR's Status as
//   is). Asked for the List, the server answers 200 and ends the stream at the first event,
//   having failed to transform it.

import type { ResourceDef } from "./resources.ts";
import { ApiStatusError } from "./status.ts";

export type PartialKind = "PartialObjectMetadata" | "PartialObjectMetadataList";

/** What the client asked to receive instead of full objects. */
export interface PartialView {
  kind: PartialKind;
  apiVersion: string;
}

const VERSIONS = new Set(["v1", "v1beta1"]);

/** The metadata-only view the Accept header asks for first; undefined: full objects (or a Table: table.ts). */
export function partialView(accept: string | null): PartialView | undefined {
  let refused = false;
  for (const part of (accept ?? "").split(",")) {
    const [type, ...params] = part.split(";").map((s) => s.trim());
    const p = new Map(params.map((kv) => kv.split("=").map((s) => s.trim()) as [string, string]));
    const as = p.get("as");
    const json = type === "application/json" || type === "*/*" || type === "application/*";
    if (as === "PartialObjectMetadata" || as === "PartialObjectMetadataList") {
      if (json && p.get("g") === "meta.k8s.io" && VERSIONS.has(p.get("v") ?? "")) {
        return { kind: as, apiVersion: `meta.k8s.io/${p.get("v")}` };
      }
      refused = true;
      continue;
    }
    if (json || type === "application/yaml" || type === "application/vnd.kubernetes.protobuf") return undefined;
  }
  if (refused) {
    throw new ApiStatusError(406, "NotAcceptable", "only the following media types are accepted: " +
      "application/json, application/yaml, application/vnd.kubernetes.protobuf");
  }
  return undefined;
}

/** One object as PartialObjectMetadata. */
export function asPartial(object: { metadata?: unknown }, view: PartialView): unknown {
  return { kind: "PartialObjectMetadata", apiVersion: view.apiVersion, metadata: object.metadata };
}

/** The Go type kube-apiserver names in its 406 (built-ins: their internal package; CRDs: unstructured). */
function goType(def: ResourceDef, list: boolean): string {
  if (def.crdName) return list ? "*unstructured.UnstructuredList" : "*unstructured.Unstructured";
  return `*${def.group ? def.group.split(".")[0] : "core"}.${def.kind}${list ? "List" : ""}`;
}

/** The answer to a LIST in `view`, or its 406. */
export function partialList(
  def: ResourceDef, list: { metadata: Record<string, unknown>; items: any[] }, view: PartialView,
): unknown {
  if (view.kind !== "PartialObjectMetadataList") {
    const message = `you requested PartialObjectMetadata, but the requested object is a list (${goType(def, true)})`;
    throw new ApiStatusError(406, "NotAcceptable", message);
  }
  const items = list.items.map((item) => asPartial(item, view));
  return { kind: view.kind, apiVersion: view.apiVersion, metadata: list.metadata, items };
}

/** The answer to a GET in `view`, or its 406. */
export function partialObject(def: ResourceDef, object: { metadata?: unknown }, view: PartialView): unknown {
  if (view.kind !== "PartialObjectMetadata") {
    const message =
      `you requested PartialObjectMetadataList, but the requested object is not a list (${goType(def, false)})`;
    throw new ApiStatusError(406, "NotAcceptable", message);
  }
  return asPartial(object, view);
}
