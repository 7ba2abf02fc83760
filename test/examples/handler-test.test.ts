// The README's "Testing your handlers" example, kept runnable here so the docs cannot rot.
import { expect, test } from "bun:test";
import { startOperator } from "kobun/testing";
import "../../handlers/example.ts"; // registers create_fn, update_fn, delete_fn

test("create_fn greets the new object", async () => {
  // A sandbox API server on 127.0.0.1 (its own kubeconfig, never yours), the CRD, the operator in-process:
  await using kit = await startOperator({ crds: [new URL("../../handlers/kobunexample.crd.yaml", import.meta.url).pathname] });
  await kit.apply("kobunexamples.kobun.dev/v1", { metadata: { name: "hello" }, spec: { size: 1 } });
  const hello = await kit.until("kobunexamples.kobun.dev/v1", "hello", (o) => o.status?.create_fn); // a watch, no polling
  expect(hello.status?.create_fn).toEqual({ message: "hello hello" });
}); // `await using`: the operator and the sandbox are stopped here, even when the test fails
