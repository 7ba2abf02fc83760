// admission/: the webhook server. Validating and mutating webhooks (AdmissionReview v1) and
// CRD conversion webhooks (ConversionReview v1), answered by the registry's on.validate,
// on.mutate and on.convert handlers over HTTPS; certificates from files or self-signed; the
// Validating/MutatingWebhookConfiguration and CRD conversion objects that point at it, and
// writing them to the API server at start-up (registration.ts). Of the handlers it knows only
// what declaring/ holds (the registry, the specs, the review shapes); runtime/ reads the settings.
// Handlers see who called: the request's headers and, when client certificates are asked for,
// the caller's verified certificate.
// Must never watch or handle objects: it answers reviews, and peering never stops it (the API
// server calls whichever replica its Service picks).

export { startWebhookServer, type WebhookServer, type WebhookServerOptions } from "./server.ts";
export type { ClientCertPolicy } from "./listener.ts";
export { serviceHosts, type CertSource } from "./certs.ts";
export { issueCertificates, type IssuedCertificates } from "./x509.ts";
export { jsonPatchBetween } from "./jsonpatch.ts";
export { register, type Registration } from "./registration.ts";
export {
  ADMISSION_GROUP, KINDS, PLURALS, crdConversion, crdName, webhookConfigurations, type Endpoint, type RuleTarget,
} from "./configurations.ts";
