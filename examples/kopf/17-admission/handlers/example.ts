// Kopf's 17-admission: validating and mutating webhooks served by the operator itself. One
// reports who calls; one refuses a spec field's value (but not in a dry run); one refuses
// another value with its own HTTP code; one checks the status subresource too; a mutator adds a
// spec field to labelled objects.
//
// Where the webhooks are served is configuration, not code, in kobun: Kopf's `settings.admission
// .server = kopf.WebhookAutoServer()` is `kobun dev` (the sandbox calls them), `kobun run
// --webhooks-url https://HOST:PORT` (a local cluster calls this machine) or, in the cluster, the
// Service that `kobun manifests` writes; Kopf's `admission.managed` is `webhooks.name`.
//
// Workarounds (issue 33 adds the native forms, marked "issue 33" below):
// - validators get no request headers nor TLS peer: the caller is named by its userInfo instead;
// - `field`/`value` filters: the check is in the validator;
// - `subresource: "*"`: the subresources are listed (a KopfExample has one: status).
import { AdmissionError, Registry } from "kobun";
import { KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;

on.validate(KopfExamples, ({ userInfo, warnings }) => {
  // issue 33: ctx.headers["user-agent"] and ctx.peer (the client certificate's subject).
  warnings.push(`Accessing as user: ${userInfo?.username ?? "(unidentified)"}`);
}, { id: "authhook" });

on.validate(KopfExamples, ({ object, dryRun }) => {
  if (!dryRun && object.spec?.field === "wrong") throw new AdmissionError("Meh! I don't like it. Change the field.");
}, { id: "validate1" });

on.validate(KopfExamples, ({ object }) => {
  // issue 33: { field: "spec.field", value: "not-allowed" } as the handler's filter.
  if (object.spec?.field === "not-allowed") throw new AdmissionError("I'm too lazy anyway. Go away!", { code: 555 });
}, { id: "validate2" });

on.validate(KopfExamples, ({ object, subresource, warnings }) => {
  const wanted = object.spec?.field;
  const stated = object.status?.field;
  if (subresource === "status" && stated !== wanted) throw new AdmissionError("status.field MUST be equal to spec.field!");
  if (subresource === undefined && stated !== wanted) {
    warnings.push(`Also update status.field to match spec.field: ${JSON.stringify(wanted)} != ${JSON.stringify(stated)}`);
  }
}, { id: "validate-subresources", subresources: ["status"] }); // issue 33: subresources: "*"

on.mutate(KopfExamples, ({ object }) => {
  object.spec.injected = 123;
}, { id: "mutate1", labels: { somelabel: "somevalue" } });
