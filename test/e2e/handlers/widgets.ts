// e2e-only admission and conversion webhooks (test/e2e/webhooks.e2e.ts), for KobunWidget
// objects (kobunwidgets.e2e.kobun.dev, served as v1 — spec.size, the storage version — and v2
// — spec.replicas; CRD in kobunwidget.crd.yaml). Served only when the binary is run with
// --webhooks-url or --webhooks-listen, so the other e2e scenarios never call them.

import { AdmissionError, on, type KubeObject } from "kobun";

const WIDGETS = "kobunwidgets.e2e.kobun.dev";

on.validate(WIDGETS, ({ object }) => {
  const size = object.apiVersion?.endsWith("/v2") ? object.spec?.replicas : object.spec?.size;
  if (!(Number.isInteger(size) && size >= 1)) throw new AdmissionError(`spec.size must be an integer of at least 1, got ${JSON.stringify(size)}`);
}, { id: "widget-size" });

on.mutate(WIDGETS, ({ object }) => {
  object.spec = { color: "blue", ...object.spec };
}, { id: "widget-defaults" });

const withSpec = (object: KubeObject, spec: Record<string, unknown>): KubeObject => ({ ...object, spec });

on.convert(WIDGETS, {
  "v1->v2": ({ spec = {}, ...rest }) => withSpec(rest as KubeObject, { replicas: spec.size, color: spec.color }),
  "v2->v1": ({ spec = {}, ...rest }) => withSpec(rest as KubeObject, { size: spec.replicas, color: spec.color }),
});
