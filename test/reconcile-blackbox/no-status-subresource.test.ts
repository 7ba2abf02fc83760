// A reconciled resource without a status subresource (a hand-written CRD that declares none): the
// API server then changes metadata.generation on every write of .status, as on any change outside
// metadata. kobun set status.observedGeneration to the generation the call saw, so each status
// write moved the generation past it and ran the reconcile again, which wrote the new generation:
// a reconcile and a PATCH every batch window, forever. Without the subresource, observedGeneration
// is left to the function (it cannot equal the generation its own write makes), kobun says so once,
// and a status that stays as it is settles after the one run its first write causes.

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { Calls, runOperator } from "./kit.ts";

const THINGS_CRD = {
  apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition",
  metadata: { name: "things.blackbox.kobun.dev" },
  spec: {
    group: "blackbox.kobun.dev", scope: "Namespaced",
    names: { plural: "things", singular: "thing", kind: "Thing", listKind: "ThingList" },
    versions: [{
      name: "v1", served: true, storage: true, // no subresources
      schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
    }],
  },
};
const THINGS_PATH = "/apis/blackbox.kobun.dev/v1/namespaces/default/things";

test("without a status subresource, a reconcile's status write settles: no observedGeneration loop", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile("blackbox.kobun.dev/v1/things", (ctx) => {
    calls.record(ctx);
    ctx.patch.status.ready = true;
  }, { id: "things" });
  await using op = await runOperator(registry, {
    before: async (post) => void await post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", THINGS_CRD),
  });
  await op.post(THINGS_PATH, { apiVersion: "blackbox.kobun.dev/v1", kind: "Thing", metadata: { name: "t" }, spec: {} });
  // The first status write moves the generation (1 → 2): one more run, which writes nothing new.
  await calls.until((c) => c.length >= 2, "the run the first status write causes");
  await Bun.sleep(600); // a window of several batch windows, in which nothing more may run
  const thing: any = await (await fetch(`${op.sandbox.url}${THINGS_PATH}/t`)).json();
  expect({ generations: calls.all.map((c) => c.generation), status: thing.status, generation: thing.metadata.generation })
    .toEqual({ generations: [1, 2], status: { ready: true }, generation: 2 });
  const said = op.logs.lines.filter((line) => /no status subresource/.test(line));
  expect(said.length).toBe(1);
  expect(said[0]).toContain("things");
}, 60_000);
