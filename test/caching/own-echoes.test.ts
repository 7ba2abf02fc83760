// OwnEchoes: which watch events are only the echo of a blind write (caching/own-echoes.ts): pure bookkeeping.

import { expect, test } from "bun:test";
import { OwnEchoes } from "../../src/caching/index.ts";
import type { KubeObject } from "../../src/kube/index.ts";

function cm(name: string, resourceVersion: string): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "ns", resourceVersion } };
}

/** Routes an event for `owner`; whether it woke (now or later: `woken` collects late wakes too). */
function router(echoes: OwnEchoes) {
  const woken: string[] = [];
  const route = (type: string, object: KubeObject, owner = "P") =>
    echoes.route(type, object, owner, () => woken.push(`${type}:${object.metadata.resourceVersion}:${owner}`));
  return { woken, route };
}

test("the echo of a blind write wakes nothing; anyone else's version, a later one, and a deletion wake", () => {
  const echoes = new OwnEchoes();
  const { woken, route } = router(echoes);
  echoes.sending("a", "ns", "P")(cm("a", "5"));
  route("added", cm("a", "5"));
  expect(woken).toEqual([]);
  route("modified", cm("a", "5")); // used up: the same version again is not an echo
  route("modified", cm("a", "7")); // someone else's change
  expect(woken).toEqual(["modified:5:P", "modified:7:P"]);
  echoes.sending("a", "ns", "P")(cm("a", "9"));
  route("deleted", cm("a", "9"));
  expect(woken.at(-1)).toBe("deleted:9:P");
  expect(echoes.kept).toBe(0);
});

test("two blind writes of one object: both echoes are quiet; one skipped by a newer event is dropped", () => {
  const echoes = new OwnEchoes();
  const { woken, route } = router(echoes);
  echoes.sending("a", "ns", "P")(cm("a", "5"));
  echoes.sending("a", "ns", "P")(cm("a", "6"));
  route("modified", cm("a", "5"));
  route("modified", cm("a", "6"));
  expect(woken).toEqual([]);
  echoes.sending("b", "ns", "P")(cm("b", "10"));
  route("modified", cm("b", "12")); // a change after ours came first: 10 can no longer come
  route("modified", cm("b", "10"));
  expect(woken).toEqual(["modified:12:P", "modified:10:P"]);
  expect(echoes.kept).toBe(0);
});

test("an event before the write's answer is held: dropped if it is the echo, woken if not, released on failure", () => {
  const echoes = new OwnEchoes();
  const { woken, route } = router(echoes);
  const settle = echoes.sending("a", "ns", "P");
  route("modified", cm("a", "4")); // someone else's, before ours
  route("modified", cm("a", "5")); // ours, before its answer
  expect(woken).toEqual([]);
  settle(cm("a", "5"));
  expect(woken).toEqual(["modified:4:P"]);
  const failing = echoes.sending("a", "ns", "P");
  route("modified", cm("a", "8"));
  failing(); // the write failed: what came meanwhile is news
  expect(woken).toEqual(["modified:4:P", "modified:8:P"]);
  expect(echoes.kept).toBe(0);
});

test("the echo wakes the reconcile of any other object than the writer's; a generateName create is keyed by its answer", () => {
  const echoes = new OwnEchoes();
  const { woken, route } = router(echoes);
  echoes.sending("a", "ns", "Q")(cm("a", "5")); // written by Q's reconcile, owned by P
  route("added", cm("a", "5"), "P");
  expect(woken).toEqual(["added:5:P"]);
  echoes.sending(undefined, "ns", "P")(cm("gen-x1", "6"));
  route("added", cm("gen-x1", "6"));
  expect(woken).toEqual(["added:5:P"]);
  echoes.sending("c", "ns", "P")(cm("c", "7"));
  route("listed", cm("c", "7")); // a relist's object is a re-check, never an echo
  expect(woken.at(-1)).toBe("listed:7:P");
});
