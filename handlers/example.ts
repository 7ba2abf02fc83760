// An example operator: the first thing to read when learning kobun.
//
// Run it against a cluster (after `kubectl apply -f handlers/kobunexample.crd.yaml`):
//   bun src/cli.ts run handlers/
// then:
//   kubectl apply -f - <<<'{"apiVersion":"kobun.dev/v1","kind":"KobunExample","metadata":{"name":"demo"},"spec":{"size":1}}'
//   kubectl get kex demo -o yaml     # status.create_fn.message == "hello demo"

import { on } from "kobun";

// The resource: "plural.group/version". "kobunexamples.kobun.dev", "kobunexamples" or
// { group, version, plural } work too.
const EXAMPLES = "kobunexamples.kobun.dev/v1";

// Runs once per object, when kobun sees it for the first time.
// Whatever a handler returns is stored in the object's status under the handler's id:
// here `status.create_fn.message`. `patch` collects further changes; kobun sends them,
// the result and its own bookkeeping in one request when the handler is done.
on.create(EXAMPLES, async ({ name, patch, logger }) => {
  logger.info(`creating ${name}`);
  patch.status.greeting = `hello ${name}`;
  return { message: `hello ${name}` };
}, { id: "create_fn" });

// Runs when the spec, labels or annotations change. `diff` lists what changed since the
// last handled state: [{ op: "change", path: ["spec", "size"], old: 1, new: 2 }, ...].
// Throw `TemporaryError("why", { delay: 10 })` to be retried in 10 s, or `PermanentError`
// to give up; any other error is retried after the handler's `backoff` (60 s by default).
on.update(EXAMPLES, async ({ diff, logger }) => {
  const changed = diff.map((d) => d.path.join("."));
  logger.info("changed", { fields: changed.join(",") });
  return { changed };
}, { id: "update_fn" });

// Runs when the object is being deleted. Because this handler exists, kobun holds every
// KobunExample with the finalizer `kobun.dev/finalizer` until the handler has succeeded,
// so the deletion is never missed, even while the operator is down.
// Pass { optional: true } to skip the finalizer (best effort instead).
on.delete(EXAMPLES, async ({ name, namespace, logger }) => {
  logger.info(`deleting ${namespace}/${name}`);
}, { id: "delete_fn" });
