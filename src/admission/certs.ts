// Where the webhook server's certificate comes from: files (cert-manager's Secret mounted in
// the Pod, the usual in production), read again when they change; or self-signed, made at
// start-up for the Service's DNS names or the given host/IP, whose CA the configurations'
// caBundle must then carry.

import { readFileSync } from "node:fs";
import { issueCertificates } from "./x509.ts";

export type CertSource =
  | { kind: "files"; certFile: string; keyFile: string; caFile?: string }
  | { kind: "self-signed"; hosts: readonly string[] };

export interface ServingCertificate {
  cert: string;
  key: string;
  /** PEM of the CA the API server must trust (the caBundle); unknown for files without a caFile. */
  caBundle?: string;
}

/** Reads the files, with a message naming the one that is missing or not PEM. */
export function readCertificateFiles(source: Extract<CertSource, { kind: "files" }>): ServingCertificate {
  const read = (path: string, label: string, what: string) => {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      throw new Error(`cannot read the webhook ${what} ${path}: ${(error as Error).message}`);
    }
    // A key may be written as "PRIVATE KEY" (PKCS #8), "EC PRIVATE KEY" or "RSA PRIVATE KEY".
    const anyPrivateKey = label === "PRIVATE KEY" && /-----BEGIN [A-Z ]*PRIVATE KEY/.test(text);
    if (!text.includes(`-----BEGIN ${label}`) && !anyPrivateKey) {
      throw new Error(`the webhook ${what} ${path} holds no PEM ${label}`);
    }
    return text;
  };
  return {
    cert: read(source.certFile, "CERTIFICATE", "certificate"),
    key: read(source.keyFile, "PRIVATE KEY", "key"),
    ...(source.caFile ? { caBundle: read(source.caFile, "CERTIFICATE", "CA file") } : {}),
  };
}

export async function servingCertificate(source: CertSource): Promise<ServingCertificate> {
  if (source.kind === "files") return readCertificateFiles(source);
  const issued = await issueCertificates(source.hosts);
  return { cert: issued.serving.cert, key: issued.serving.key, caBundle: issued.ca.cert };
}

/** The DNS names a Service is reached by from the API server. */
export function serviceHosts(service: string, namespace: string): string[] {
  return [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`];
}
