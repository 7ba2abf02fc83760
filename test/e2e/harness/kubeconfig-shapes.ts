// The kubeconfig shapes that providers hand out, written against one real kube-apiserver: each
// a kubeconfig text (relative names are relative to `dir`, where it is written) and whether
// kubectl gets through with it. test/e2e/kubeconfig-shapes.e2e.ts holds kobun to kubectl on each.

import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** What the shapes are written against: the API server, the fronts before it and the files beside. */
export interface ShapeWorld {
  dir: string;
  server: string;
  token: string;
  /** PEM of the API server's chain, also written to `server-ca.crt` in `dir`. */
  serverCa: string;
  clientCert: string;
  clientKey: string;
  /** PEM of the CA that signed the reverse proxy's certificate (at an absolute path: `frontCaFile`). */
  frontCaFile: string;
  proxyUrl: string;
  prefixUrl: string;
  /** https://127.0.0.2:port, forwarded to the API server, whose certificate names "kubernetes" but not 127.0.0.2. */
  forwardedUrl: string;
}

export interface Shape {
  name: string;
  kubeconfig(w: ShapeWorld): string;
  /** Whether kubectl lists namespaces with it. */
  kubectl: boolean;
  /** kobun's refusal (always where kubectl fails; where kubectl works, a difference written down); else it works. */
  refusal?: RegExp;
  /** A front that must carry kobun's requests. */
  through?: "proxy" | "prefix" | "forwarder";
}

const b64 = (text: string) => Buffer.from(text).toString("base64");

/** A one-context kubeconfig: the cluster's and the user's fields as YAML lines (indented by the caller's 4). */
export function kubeconfigOf(cluster: string[], user: string[], o: { namespace?: string; extra?: string } = {}): string {
  const ns = o.namespace ? `, namespace: ${o.namespace}` : "";
  return [
    "apiVersion: v1", "kind: Config",
    "clusters:", "- name: remote", "  cluster:", ...cluster.map((l) => `    ${l}`),
    "users:", "- name: me", "  user:", ...(user.length ? user.map((l) => `    ${l}`) : ["    {}"]),
    "contexts:", `- name: laptop`, `  context: {cluster: remote, user: me${ns}}`,
    "current-context: laptop", o.extra ?? "",
  ].join("\n");
}

/** Writes the shell scripts the exec shapes run into `dir`: they answer with `token` (see execShapes). */
export function writePlugins(dir: string, token: string): void {
  const script = (name: string, body: string) => {
    writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, name), 0o755);
  };
  // Its ExecCredential's version is its first argument; what it was asked is kept in $INFO_FILE, if set.
  script("plugin.sh", [
    `[ -n "$INFO_FILE" ] && printf '%s' "$KUBERNETES_EXEC_INFO" > "$INFO_FILE"`,
    `[ -n "$RUNS_FILE" ] && echo run >> "$RUNS_FILE"`,
    `expiry=""; [ -n "$EXPIRES_IN" ] && expiry=",\\"expirationTimestamp\\":\\"$(date -u -d "@$(( $(date +%s) + EXPIRES_IN ))" +%Y-%m-%dT%H:%M:%SZ)\\""`,
    `printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"%s"%s}}' "$1" "${token}" "$expiry"`,
  ].join("\n"));
  // A plugin that needs a login first; its complaint carries a token-shaped secret that must not be shown.
  script("needs-login.sh", `echo "error: not logged in (run: mycloud login); Authorization: Bearer ${token}" >&2\nexit 3`);
}

const ca = "certificate-authority: server-ca.crt";
const exec = (fields: string) => [`exec: {command: ./plugin.sh, ${fields}}`];
const v1 = "apiVersion: client.authentication.k8s.io/v1";
const v1beta1 = "apiVersion: client.authentication.k8s.io/v1beta1";

export const SHAPES: Shape[] = [
  { name: "CA file relative to the kubeconfig, token", kubectl: true, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], [`token: ${w.token}`]) },
  { name: "CA file absolute, token", kubectl: true, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, `certificate-authority: ${join(w.dir, "server-ca.crt")}`], [`token: ${w.token}`]) },
  { name: "CA data, client certificate and key as files", kubectl: true, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, `certificate-authority-data: ${b64(w.serverCa)}`], ["client-certificate: client.crt", "client-key: client.key"]) },
  { name: "client certificate and key as data", kubectl: true, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], [`client-certificate-data: ${b64(w.clientCert)}`, `client-key-data: ${b64(w.clientKey)}`]) },
  { name: "tokenFile", kubectl: true, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], ["tokenFile: token"]) },
  { name: "tokenFile beside a stale token: the file wins", kubectl: true, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], ["token: stale-token", "tokenFile: token"]) },
  { name: "insecure-skip-tls-verify", kubectl: true, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, "insecure-skip-tls-verify: true"], [`token: ${w.token}`]) },
  { name: "insecure-skip-tls-verify beside a CA", kubectl: false, refusal: /certificate-authority and insecure-skip-tls-verify/, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca, "insecure-skip-tls-verify: true"], [`token: ${w.token}`]) },
  { name: "tls-server-name", kubectl: true, through: "forwarder", kubeconfig: (w) => kubeconfigOf([`server: ${w.forwardedUrl}`, ca, "tls-server-name: kubernetes"], [`token: ${w.token}`]) },
  { name: "no tls-server-name where the certificate does not name the address", kubectl: false, refusal: /TLS failure.*tls-server-name/, kubeconfig: (w) => kubeconfigOf([`server: ${w.forwardedUrl}`, ca], [`token: ${w.token}`]) },
  { name: "proxy-url (HTTP CONNECT)", kubectl: true, through: "proxy", kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca, `proxy-url: ${w.proxyUrl}`], [`token: ${w.token}`]) },
  { name: "proxy-url of a proxy that is not there", kubectl: false, refusal: /cannot connect|ECONNREFUSED|connection/i, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca, "proxy-url: http://127.0.0.1:9"], [`token: ${w.token}`]) },
  { name: "proxy-url socks5 (kobun cannot speak it)", kubectl: false, refusal: /socks5/, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca, "proxy-url: socks5://127.0.0.1:9"], [`token: ${w.token}`]) },
  { name: "server URL with a path prefix, behind a reverse proxy", kubectl: true, through: "prefix", kubeconfig: (w) => kubeconfigOf([`server: ${w.prefixUrl}/`, `certificate-authority: ${w.frontCaFile}`], [`token: ${w.token}`]) },
  { name: "impersonate as, with as-groups, as-uid, as-user-extra", kubectl: true, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], [`token: ${w.token}`, "as: bob", "as-uid: bob-uid", "as-groups: [system:masters]", "as-user-extra: {team: [payments]}"]) },
  { name: "impersonate as, without a group that may list", kubectl: false, refusal: /403 Forbidden.*User "bob" cannot list/, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], [`token: ${w.token}`, "as: bob"]) },
  { name: "impersonate two groups (kubectl can; kobun's fetch cannot)", kubectl: true, refusal: /impersonates with 2 values of Impersonate-Group/, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], [`token: ${w.token}`, "as: bob", "as-groups: [system:masters, auditors]"]) },
  { name: "exec v1, interactiveMode Never, env and args", kubectl: true, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], exec(`${v1}, interactiveMode: Never, args: [client.authentication.k8s.io/v1], env: [{name: UNUSED, value: x}]`)) },
  { name: "exec v1beta1 (interactiveMode defaults)", kubectl: true, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], exec(`${v1beta1}, args: [client.authentication.k8s.io/v1beta1]`)) },
  { name: "exec v1 without interactiveMode", kubectl: false, refusal: /interactiveMode must be specified/, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], exec(`${v1}, args: [client.authentication.k8s.io/v1]`)) },
  { name: "exec without apiVersion", kubectl: false, refusal: /apiVersion must be specified/, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], exec("interactiveMode: Never")) },
  { name: "exec interactiveMode Always without a terminal", kubectl: false, refusal: /standard input is not a terminal/, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], exec(`${v1}, interactiveMode: Always, args: [client.authentication.k8s.io/v1]`)) },
  { name: "exec plugin answering in another version than configured", kubectl: false, refusal: /configured to use client.authentication.k8s.io\/v1beta1, but printed ExecCredential of client.authentication.k8s.io\/v1/, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], exec(`${v1beta1}, args: [client.authentication.k8s.io/v1]`)) },
  { name: "exec plugin that fails with stderr", kubectl: false, refusal: /needs-login\.sh" of user "me" failed with exit code 3: error: not logged in \(run: mycloud login\)/, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], [`exec: {command: ./needs-login.sh, ${v1}, interactiveMode: Never}`]) },
  { name: "a context's default namespace", kubectl: true, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], [`token: ${w.token}`], { namespace: "kube-public" }) },
  { name: "extensions and unknown fields", kubectl: true, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca, "extensions:", "- name: example.com/team", "  extension: {owner: payments}", "colour: blue"], [`token: ${w.token}`, "favourite: tea"], { extra: "preferences: {}\nextensions:\n- name: example.com/top\n  extension: {a: 1}\nunknown-top: 1" }) },
  { name: "current-context missing", kubectl: false, refusal: /has no current-context; pass a context \(one of: laptop\)/, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], [`token: ${w.token}`]).replace("current-context: laptop", "") },
  { name: "current-context naming nothing", kubectl: false, refusal: /context "gone" not found in kubeconfig .*; available: laptop/, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], [`token: ${w.token}`]).replace("current-context: laptop", "current-context: gone") },
  { name: "a wrong token", kubectl: false, refusal: /authentication failed against .* as me \(token\)/, kubeconfig: (w) => kubeconfigOf([`server: ${w.server}`, ca], ["token: not-the-token"]) },
];
