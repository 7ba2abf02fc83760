// The CustomResourceDefinition a defined resource becomes: names, one entry per version with its
// structural OpenAPI v3 schema, printer columns and status subresource. Apart from definition.ts
// because it is a translation (TypeBox's JSON Schema into what the API server accepts), not a
// declaration: definition.ts checks what the author wrote, this writes it out.

import type { TSchema } from "typebox";
import type { KubeObject } from "../kube/index.ts";
import { structuralSchema } from "./crd-schema.ts";
import { RegistrationError } from "./registration.ts";
import { STATUS_KEY } from "./keys.ts";

/** A column of `kubectl get` (the CRD's additionalPrinterColumns). */
export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  /** A JSONPath into the object, like ".spec.size". */
  jsonPath: string;
  description?: string;
  priority?: number;
  format?: string;
}

/** A CustomResourceDefinition as defineResource writes it. */
export type CrdObject = KubeObject & { spec: Record<string, any> };

/** One version as the CRD will carry it (definition.ts plans them from either form of `versions`). */
export interface VersionPlan {
  name: string; served: boolean; storage: boolean; schema: { spec: TSchema; status?: TSchema };
  columns?: readonly PrinterColumn[]; deprecated?: boolean | string;
}

/** The names of a defined resource, as the CRD needs them. */
interface CrdNames {
  group: string; kind: string; plural: string; singular?: string; shortNames?: string[];
  scope?: "Namespaced" | "Cluster";
}

/** The CRD of a defined resource, one entry per planned version. */
export function crdOf(definition: CrdNames, plans: VersionPlan[]): CrdObject {
  const { group, kind, plural } = definition;
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: definition.scope ?? "Namespaced",
      names: {
        kind, plural, singular: definition.singular ?? kind.toLowerCase(), listKind: `${kind}List`,
        ...(definition.shortNames ? { shortNames: [...definition.shortNames] } : {}),
      },
      versions: plans.map((plan) => versionOf(plan, plans.length > 1
        ? `defineResource(${JSON.stringify(kind)}) version ${plan.name}` : `defineResource(${JSON.stringify(kind)})`)),
    },
  };
}

const OPEN_STATUS = { type: "object", "x-kubernetes-preserve-unknown-fields": true } as const;

function versionOf(plan: VersionPlan, where: string): Record<string, unknown> {
  const { schema } = plan;
  const properties: Record<string, unknown> = { spec: plain(schema.spec, "spec", where) };
  // Without a status schema the status is open: handlers' results and kobun's progress land there (as Kopf's do).
  properties.status = schema.status ? withProgressRoom(plain(schema.status, "status", where), where) : OPEN_STATUS;
  const columns = plan.columns?.map((c) => ({ ...c }));
  return {
    name: plan.name, served: plan.served, storage: plan.storage,
    ...(plan.deprecated
      ? { deprecated: true, ...(typeof plan.deprecated === "string" ? { deprecationWarning: plan.deprecated } : {}) }
      : {}),
    schema: { openAPIV3Schema: { type: "object", properties, required: ["spec"] } },
    subresources: { status: {} },
    ...(columns?.length ? { additionalPrinterColumns: columns } : {}),
  };
}

/**
 * kobun keeps its progress at status.kobun (handling/progress.ts) beside the handlers' results, one
 * PATCH per cycle; a status schema that pruned it would push the progress to annotations, at
 * two PATCHes per cycle. The status type handlers see does not name it: it is kobun's own. And
 * status.observedGeneration, which on.reconcile writes beside any status (reconcile-cycle.ts):
 * the API server would prune it from a schema that does not declare it.
 */
function withProgressRoom(status: any, where: string): unknown {
  if (typeof status !== "object" || status === null || status.type !== "object") return status;
  // A map (Type.Record) cannot have properties beside it (kube-apiserver: "mutual exclusive"): one of
  // anything has room for kobun's keys already; a map of a narrower type has none.
  const map = status.additionalProperties;
  if (map && typeof map === "object") {
    if (map["x-kubernetes-preserve-unknown-fields"] === true) return status;
    const of = JSON.stringify(map.type ?? map);
    throw new RegistrationError(`${where}: status: a map (Type.Record) of ${of} leaves no room for` +
      ` kobun's status.${STATUS_KEY} and status.observedGeneration: make the status a Type.Object ` +
      `and put the map under a field of it, or make it a map of Type.Unknown()`);
  }
  const room = status.properties?.[STATUS_KEY] ?? { type: "object", "x-kubernetes-preserve-unknown-fields": true };
  const observed = status.properties?.observedGeneration ?? { type: "integer", format: "int64" };
  return { ...status, properties: { ...status.properties, [STATUS_KEY]: room, observedGeneration: observed } };
}

function plain(schema: TSchema, path: string, where: string): unknown {
  // JSON round trip: TypeBox keeps its bookkeeping under symbol keys, which a CRD must not carry.
  return structuralSchema(JSON.parse(JSON.stringify(schema)), path, where);
}
