// A client certificate for the sandbox to present to the webhooks, as kube-apiserver presents the
// one its admission kubeConfigFile names, and the CA that signs it, for `webhooks.clientCaFile`.
// Made with the system's openssl, as an administrator would (EC P-256, valid one day).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface ClientCertificate {
  /** The CA's file (PEM), for webhooks.clientCaFile. */
  caFile: string;
  cert: string;
  key: string;
  /** Removes the CA's file. */
  remove(): void;
}

function openssl(cwd: string, args: string[]): void {
  const done = Bun.spawnSync(["openssl", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  if (done.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${done.stderr.toString().trim()}`);
}

/** A fresh CA and a client certificate with the common name `commonName`, signed by it. */
export function clientCertificate(commonName: string): ClientCertificate {
  const dir = mkdtempSync(join(tmpdir(), "kopf-17-admission-"));
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(dir, ["req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=example-ca",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"]);
  openssl(dir, ["req", ...ec, "-keyout", "client.key", "-out", "client.csr", "-subj", `/CN=${commonName}`]);
  writeFileSync(join(dir, "client.ext"), "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n" +
    "extendedKeyUsage=clientAuth\n");
  openssl(dir, ["x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-set_serial", "0x1001",
    "-days", "1", "-out", "client.crt", "-extfile", "client.ext"]);
  const read = (file: string) => readFileSync(join(dir, file), "utf8");
  const made = { cert: read("client.crt"), key: read("client.key") };
  for (const file of ["ca.key", "client.key", "client.csr", "client.ext", "client.crt"]) rmSync(join(dir, file));
  return { caFile: join(dir, "ca.crt"), ...made, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
