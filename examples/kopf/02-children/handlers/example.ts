// Kopf's 02-children: a creation handler makes a Pod from the spec, adopted by the object (owner
// reference, namespace, a name from the parent's, its labels), and lists it in its status.
// Kopf's `kopf.adopt(doc)` is `ctx.adopt(pod)`: the owner is the handled object.
import { Registry, type Pod } from "kobun";
import { KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;

on.create(KopfExamples, async ({ spec, adopt, api }) => {
  const pod: Pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {},
    spec: {
      containers: [{
        name: "the-only-one",
        image: "busybox",
        command: ["sh", "-x", "-c"],
        args: [`echo "FIELD=$FIELD"\nsleep ${spec.duration ?? 0}\n`],
        env: [{ name: "FIELD", value: spec.field ?? "default-value" }],
      }],
    },
  };
  adopt(pod); // generateName "<parent>-", the parent's namespace and labels
  const made = await api.create(pod);
  return { children: [made.metadata.uid] }; // → status.create_fn
}, { id: "create_fn", children: ["pods"] });
