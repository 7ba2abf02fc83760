// Typed resource tokens are selectors at run time: handlers registered with
// `resource<T>("kobunexamples.kobun.dev/v1")` run for that resource like the string form's.

import { afterEach, describe, expect, test } from "bun:test";
import { Registry } from "../../src/declaring/registry.ts";
import { resource } from "../../src/declaring/resource.ts";
import type { ObjectMeta } from "../../src/kube/types.ts";
import { startHarness, type Harness } from "../handling/harness.ts";

interface KobunExample {
  metadata: ObjectMeta;
  spec: { size: number; field?: string };
  status?: { greeting?: string };
}
const Examples = resource<KobunExample>("kobunexamples.kobun.dev/v1");

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe("typed resource tokens", () => {
  test("a token names the resource as its selector text does, and prints as that text", () => {
    expect({ ...Examples }).toEqual({ group: "kobun.dev", version: "v1", plural: "kobunexamples" });
    expect(JSON.stringify(Examples)).toBe('"kobunexamples.kobun.dev/v1"');
    expect({ ...resource.pods }).toEqual({ group: "", version: "v1", plural: "pods" });
    expect({ ...resource.deployments }).toEqual({ group: "apps", version: "v1", plural: "deployments" });
    expect(() => resource("a/b/c/d")).toThrow(/cannot read resource selector "a\/b\/c\/d"/);
  });

  test("create and field handlers registered with a token run and patch the object", async () => {
    const registry = new Registry();
    registry.on.create(Examples, ({ spec, patch }) => {
      patch.status.greeting = `hello ×${spec.size}`;
    }, { id: "greet" });
    registry.on.field(Examples, { field: "spec.size", id: "size" }, ({ new: size, patch }) => {
      patch.metadata.labels = { size: String(size) };
    });
    expect(registry.selectors()).toEqual([Examples]);
    h = await startHarness({ registry });
    await h.create("typed", { size: 3 });
    const done = await h.until(() => h!.get("typed")?.metadata?.labels?.size && h!.get("typed")?.status?.greeting && h!.get("typed"));
    expect(done.status.greeting).toBe("hello ×3");
    expect(done.metadata.labels.size).toBe("3");
  });
});
