// Kopf's 17-admission: validating and mutating webhooks served by the operator itself. One
// reports who calls (the request's User-Agent, the client certificate's common name); one refuses
// a spec field's value (but not in a dry run); one, filtered by the field's value, refuses with
// its own HTTP code; one checks the status subresource too; a mutator adds a spec field to
// labelled objects.
//
// Where the webhooks are served is configuration, not code, in kobun: Kopf's `settings.admission
// .server = kopf.WebhookAutoServer()` is `kobun dev` (the sandbox calls them), `kobun run
// --webhooks-url https://HOST:PORT` (a local cluster calls this machine) or, in the cluster, the
// Service that `kobun manifests` writes; Kopf's `admission.managed` is `webhooks.name`. Kopf's
// `sslpeer` is `peer`, given when `webhooks.clientCaFile` names the CA of the caller's certificate.
import { AdmissionError, Registry } from "kobun";
import { KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;

on.validate(KopfExamples, ({ headers, peer, warnings }) => {
  warnings.push(`Accessing as user-agent: ${headers["user-agent"] ?? "(unidentified)"}`);
  if (!peer) warnings.push("SSL peer is not identified.");
  else if (peer.subject.CN) warnings.push(`SSL peer is ${peer.subject.CN}.`);
  else warnings.push("SSL peer's common name is absent.");
}, { id: "authhook" });

on.validate(KopfExamples, ({ object, dryRun }) => {
  if (!dryRun && object.spec?.field === "wrong") throw new AdmissionError("Meh! I don't like it. Change the field.");
}, { id: "validate1" });

on.validate(KopfExamples, () => {
  throw new AdmissionError("I'm too lazy anyway. Go away!", { code: 555 });
}, { id: "validate2", field: "spec.field", value: "not-allowed" });

on.validate(KopfExamples, ({ object, subresource, warnings }) => {
  const wanted = object.spec?.field;
  const stated = object.status?.field;
  if (subresource === "status" && stated !== wanted) throw new AdmissionError("status.field MUST be equal to spec.field!");
  if (subresource === undefined && stated !== wanted) {
    warnings.push(`Also update status.field to match spec.field: ${JSON.stringify(wanted)} != ${JSON.stringify(stated)}`);
  }
}, { id: "validate-subresources", subresources: ["*"] });

on.mutate(KopfExamples, ({ object }) => {
  object.spec.injected = 123;
}, { id: "mutate1", labels: { somelabel: "somevalue" } });
