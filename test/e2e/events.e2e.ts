// ctx.event's Events as the API server stores them (issue 33): a type of one's own (Kopf's
// `kopf.event(type=...)`), Kopf's "Error" type of `kopf.exception`, and an Event without a
// message. Core v1 checks no type; this proves kube-apiserver takes them as the sandbox does.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./events.e2e.ts

import { describe, expect, test } from "bun:test";
import { eventRecorder } from "../../src/handling/recorder.ts";
import type { Resource } from "../../src/kube/types.ts";
import { EventPoster } from "../../src/posting/poster.ts";
import { createNamespace, EVENTS } from "./harness/kube.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const CONFIGMAPS: Resource = {
  group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false,
};

describe.each(selectedTargets())("ctx.event's Events against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [], cleanup: [] });

  test("a custom type, Kopf's Error type and an empty message are stored as posted", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-events");
    const object = await t.client.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "told" } });
    const poster = new EventPoster({ client: t.client });
    const event = eventRecorder(poster, object);
    event.post("SomeType", "Custom", "a type of its own");
    event.exception(new TypeError("bad input"), { message: "while parsing:", type: "Error" });
    event.info("Bare");
    await poster.flush(AbortSignal.timeout(20_000));
    expect(poster.stats).toMatchObject({ posted: 3, failed: 0 });
    const list = await t.client.list(EVENTS, { namespace: ns, fieldSelector: `involvedObject.uid=${object.metadata.uid}` });
    const seen = list.items.map((e: any) => [e.type, e.reason, e.message ?? ""]).sort();
    expect(seen).toEqual([
      ["Error", "TypeError", "while parsing: bad input"],
      ["Normal", "Bare", ""],
      ["SomeType", "Custom", "a type of its own"],
    ]);
  }, 60_000);
});
