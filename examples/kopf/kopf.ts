// What the ports of Kopf's examples share, as Kopf's examples share ../crd.yaml and ../obj.yaml:
// the KopfExample resource, typed, and the sample object.

import { resource, type ObjectMeta } from "kobun";

export interface KopfExample {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: { duration?: string; field?: string; items?: string[]; lst?: unknown[]; [key: string]: unknown };
  status?: Record<string, any>;
}

/** kopfexamples.kopf.dev/v1 (crd.yaml beside this file). */
export const KopfExamples = resource<KopfExample>("kopfexamples.kopf.dev/v1");

/** Kopf's obj.yaml: a label, an annotation, and a spec with a duration, a field and two items. */
export function sampleObject(name = "kopf-example-1"): KopfExample & { metadata: { name: string } } {
  return {
    metadata: { name, labels: { somelabel: "somevalue" }, annotations: { someannotation: "somevalue" } },
    spec: { duration: "1m", field: "value", items: ["item1", "item2"] },
  };
}
