import { expect, test } from "bun:test";
import { resource } from "kobun";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { startExample } from "../../testing.ts";
import { registry } from "../handlers/example.ts";

test("02-children: the Pod is made from the spec, owned by the object, and listed in its status", async () => {
  await using kit = await startExample(registry);
  const parent = await kit.apply(KopfExamples, sampleObject());
  const seen = await kit.until(KopfExamples, "kopf-example-1", (o) => o.status?.create_fn?.children);
  const [uid] = seen.status?.create_fn?.children as string[];
  const pods = await kit.client.list(await kit.client.resolve(resource.pods), { namespace: "default" });
  const pod = pods.items.find((p) => p.metadata.uid === uid)!;
  expect(pod.metadata.name).toStartWith("kopf-example-1-");
  expect(pod.metadata.labels).toEqual({ somelabel: "somevalue" });
  expect(pod.metadata.ownerReferences).toEqual([expect.objectContaining({
    kind: "KopfExample", name: "kopf-example-1", uid: parent.metadata.uid, controller: true,
  })]);
  const container = (pod as any).spec.containers[0];
  expect(container.env).toEqual([{ name: "FIELD", value: "value" }]);
  expect(container.args[0]).toContain("sleep 1m");
  // Deleting the parent garbage-collects the child.
  await kit.delete(KopfExamples, "kopf-example-1");
  await kit.gone(resource.pods, pod.metadata.name!);
});
