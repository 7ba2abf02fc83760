// Certificates for the HTTPS sandbox, made with the system `openssl` (EC P-256, valid one
// day): a CA, a server certificate for 127.0.0.1/localhost, and a client certificate
// (CN=kobun-sandbox, O=system:masters) signed by the same CA. Generated once per process
// and reused, since every sandbox trusts only its own kubeconfig anyway.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface SandboxCerts {
  ca: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

let cached: SandboxCerts | undefined;

function openssl(cwd: string, args: string[]): void {
  const r = Bun.spawnSync(["openssl", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) {
    throw new Error(`sandbox: openssl ${args[0]} failed (is openssl installed?): ${r.stderr.toString().trim()}`);
  }
}

function leaf(dir: string, name: string, subj: string, ext: string): void {
  openssl(dir, ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subj]);
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(dir, ["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key",
    "-set_serial", `0x${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`, "-days", "1",
    "-out", `${name}.crt`, "-extfile", `${name}.ext`]);
}

export function sandboxCerts(): SandboxCerts {
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), "kobun-sandbox-pki-"));
  try {
    openssl(dir, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
      "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=kobun-sandbox-ca",
      "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"]);
    leaf(dir, "server", "/CN=127.0.0.1",
      "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n" +
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    leaf(dir, "client", "/O=system:masters/CN=kobun-sandbox",
      "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n");
    const read = (f: string) => readFileSync(join(dir, f), "utf8");
    cached = {
      ca: read("ca.crt"), caKey: read("ca.key"),
      serverCert: read("server.crt"), serverKey: read("server.key"),
      clientCert: read("client.crt"), clientKey: read("client.key"),
    };
    return cached;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
