// The handler against a real API server in this process (the sandbox: no cluster, no mocks).
import { expect, test } from "bun:test";
import { startOperator } from "kobun/testing";
import { Hellos } from "../handlers/hello.ts"; // importing it registers its handlers

test("create_fn greets a new Hello", async () => {
  await using kit = await startOperator();
  await kit.apply(Hellos, { metadata: { name: "world" }, spec: { greeting: "hello" } });
  const hello = await kit.until(Hellos, "world", (o) => o.status?.create_fn);
  expect(hello.status?.create_fn?.message).toBe("hello, world");
});
