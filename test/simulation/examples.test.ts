// The repository's port of Kopf's 02-children example, under simulation: its create handler makes
// a Pod with a generated name, as Kopf's does, so a crash right after that create (before the
// handler is recorded as done) makes a second Pod on restart. A finding about the example (Kopf's
// own has the same at-least-once hole), kept here as proof that simulate finds it unaided.

import { expect, test } from "bun:test";
import { simulate } from "kobun/testing";
import { registry } from "../../examples/kopf/02-children/handlers/example.ts";
import { KopfExamples, sampleObject } from "../../examples/kopf/kopf.ts";
import { failureOf } from "./widgets.ts";

test("Kopf's 02-children: a crash right after the Pod's create leaves two Pods", async () => {
  const simulation = simulate({
    registry, crds: [new URL("../../examples/kopf/crd.yaml", import.meta.url).pathname],
    volatile: ["status.create_fn.children"], // the Pod's uid
    scenario: async (world) => {
      await world.apply(KopfExamples, sampleObject());
    },
  });
  const { failure, shrunk } = await failureOf(simulation);
  expect(failure.details).toContain("~ pods default/kopf-example-1-*: 2 objects where the reference has 1");
  expect(shrunk).toEqual([{ kind: "crash", after: { verb: "create", plural: "pods", name: "kopf-example-1-*", nth: 1 } }]);
}, 60_000);
