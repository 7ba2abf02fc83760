// A validating admission webhook in the test process, for files that check what the API server
// sends its webhooks: an HTTPS server on 127.0.0.1 (a fresh CA) allowing every call and recording
// what `record` takes of each AdmissionReview request, and the ValidatingWebhookConfiguration
// (named `run`) that points the server at it for core/v1 `resources` labelled `run=<run>`.

import { issueCertificates } from "../../../src/admission/x509.ts";

export async function recordingWebhook<T>(run: string, resources: string[], operations: string[], record: (request: any) => T) {
  const issued = await issueCertificates(["127.0.0.1"]);
  const calls: T[] = [];
  const server = Bun.serve({
    port: 0, hostname: "127.0.0.1", tls: { cert: issued.serving.cert, key: issued.serving.key },
    async fetch(req) {
      const { request } = (await req.json()) as any;
      calls.push(record(request));
      return Response.json({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid: request.uid, allowed: true } });
    },
  });
  const configuration = {
    apiVersion: "admissionregistration.k8s.io/v1", kind: "ValidatingWebhookConfiguration", metadata: { name: run },
    webhooks: [{
      name: "record.example.com", admissionReviewVersions: ["v1"], sideEffects: "None", failurePolicy: "Fail", timeoutSeconds: 10,
      clientConfig: { url: `https://127.0.0.1:${server.port}/record`, caBundle: Buffer.from(issued.ca.cert).toString("base64") },
      rules: [{ operations, apiGroups: [""], apiVersions: ["v1"], resources }],
      objectSelector: { matchLabels: { run } },
    }],
  };
  return { server, calls, configuration };
}
