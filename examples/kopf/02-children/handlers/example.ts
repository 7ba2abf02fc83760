// Kopf's 02-children: a creation handler makes a Pod from the spec, adopted by the object (owner
// reference, namespace, a name from the parent's, its labels), and lists it in its status.
//
// Workaround (issue 33 makes it unnecessary): `adopt` needs `owner: body` and `labels: true`;
// Kopf's adopt() finds the owner in the handler's context and copies the labels by default.
import { adopt, Registry, type Pod } from "kobun";
import { KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;

on.create(KopfExamples, async ({ spec, body, api }) => {
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
  adopt(pod, { owner: body, labels: true }); // generateName "<parent>-", the parent's namespace and labels
  const made = await api.create(pod);
  return { children: [made.metadata.uid] }; // → status.create_fn
}, { id: "create_fn", children: ["pods"] });
