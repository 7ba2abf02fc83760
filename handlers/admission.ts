// Admission webhooks for the example: the API server asks the operator before it stores a
// KobunExample, so a bad spec is refused by `kubectl apply` itself, with this message, instead
// of reaching a handler that would retry it forever.
//
// The example is commented out, so that the example operator (and `kobun manifests` for it) stays
// as it is: uncomment the code below to try it. test/examples/admission-example.test.ts runs it
// uncommented, against the sandbox, so it cannot rot.
//
// kobun serves them over HTTPS from the same binary when told where the API server reaches it:
//   in a cluster   `kobun manifests` adds the Service, the Validating/MutatingWebhookConfiguration
//                  and `--webhooks-listen=0.0.0.0:9443` to the Deployment (certificates: self-signed,
//                  or cert-manager's files with webhooks.certFile/keyFile; see README "Webhooks");
//   on a laptop    `kobun run --webhooks-url https://<your IP>:9443` registers configurations that
//                  point at it; `kobun dev` makes the sandbox call them, with no cluster at all.
//
//   kubectl apply -f - <<<'{"apiVersion":"kobun.dev/v1","kind":"KobunExample","metadata":{"name":"bad"},"spec":{"size":0}}'
//   → admission webhook "size.kobun-operator.kobun.dev" denied the request: spec.size must be a whole number from 1 to 100, got 0

// import { AdmissionError, on } from "kobun";
//
// const EXAMPLES = "kobunexamples.kobun.dev/v1";
//
// // A validator returns nothing to allow the request, or throws AdmissionError to refuse it:
// // the message is what the user sees; `code` (400 by default) and `warnings` are optional.
// // Any other error refuses with a generic message, and its details go only to the log.
// // It runs on CREATE and UPDATE unless `operations` says otherwise; `ctx.oldObject` is the
// // stored object on UPDATE. While no replica answers (the operator is down, or not deployed
// // yet) the API server refuses such writes: pass `failurePolicy: "Ignore"` to store them unchecked.
// on.validate(EXAMPLES, ({ object }) => {
//   const size = object.spec?.size;
//   if (size !== undefined && !(Number.isInteger(size) && size >= 1 && size <= 100)) {
//     throw new AdmissionError(`spec.size must be a whole number from 1 to 100, got ${JSON.stringify(size)}`);
//   }
// }, { id: "size", timeoutSeconds: 5 });
//
// // A mutator changes `ctx.object` in place: kobun answers with the JSON Patch between what the
// // API server sent and what the handler left. Here: a missing size defaults to 1. Mutators run
// // before validators, so the validator above sees the defaulted object.
// on.mutate(EXAMPLES, ({ object }) => {
//   object.spec = { size: 1, ...object.spec };
// }, { id: "defaults", operations: ["CREATE"], timeoutSeconds: 5 });

export {};
