// The `webhooks:` block of kobun.yaml: where the admission/conversion webhook server listens,
// where its certificate comes from, and what the API server is told to call. Used only when
// the handlers register on.validate, on.mutate or on.convert.

import { duration, flag, orNull, section, text, textList } from "./fields.ts";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function isHttpsUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "https:" && url.hostname !== "" && url.search === "" && url.hash === "";
  } catch {
    return false;
  }
}

/** "host:port" or ":port", with a port from 0 (any free one) to 65535. */
export function parseListen(value: string): { hostname: string; port: number } | undefined {
  const match = /^(\[[0-9a-fA-F:]+\]|[^:\s]*):(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (!match || port > 65535) return undefined;
  return { hostname: (match[1] || "0.0.0.0").replace(/^\[|\]$/g, ""), port };
}

const label = (doc: string) => text({
  default: "kobun-operator", doc,
  expected: 'a DNS label (lowercase letters, digits and "-")', valid: (v) => v.length <= 63 && DNS_LABEL.test(v),
});
const file = (doc: string) => text({ doc, expected: "a file path" });
const host = text({ doc: "", expected: "a DNS name or an IP address", valid: (v) => /^[A-Za-z0-9.:*-]+$/.test(v) });

export const WEBHOOKS_SECTION = section("Webhooks: the HTTPS server of on.validate, on.mutate and on.convert " +
  "(only when handlers register them).", {
  listen: orNull(text({
    doc: 'Serve the webhooks at this address, "host:port" (kobun manifests\' Deployment: "0.0.0.0:9443").',
    expected: 'an address like "0.0.0.0:9443" or ":9443"', valid: (v) => parseListen(v) !== undefined,
  }), "0.0.0.0 and the port of url when url is set, else no webhook server"),
  url: orNull(text({
    doc: "Development: register URL-based configurations pointing here (like https://192.168.1.5:9443), " +
      "instead of the Service.",
    expected: 'an https:// URL like "https://127.0.0.1:9443"', valid: isHttpsUrl,
  }), "the operator's Service"),
  name: label("Names the Validating/MutatingWebhookConfiguration and the Service (kobun manifests --name)."),
  service: section("The Service in front of the operator's Pods, port 443 (without url); it is named webhooks.name.", {
    namespace: orNull(
      text({ doc: "Its namespace.", expected: "a namespace name", valid: (v) => DNS_LABEL.test(v) }),
      "$POD_NAMESPACE, else default",
    ),
  }),
  certFile: orNull(
    file("PEM serving certificate (cert-manager's tls.crt); read again when it changes."), "self-signed",
  ),
  keyFile: orNull(file("PEM private key of certFile (tls.key)."), "self-signed"),
  caFile: orNull(
    file("PEM CA of certFile (ca.crt): kobun then keeps the caBundle in sync with it too."),
    "the caBundle is someone else's (cert-manager's cainjector)",
  ),
  clientCaFile: orNull(
    file("PEM CA(s) of the client certificates callers present (kube-apiserver's, from its admission " +
      "kubeConfigFile): the server asks for one, refuses a connection whose certificate does not verify, " +
      "and handlers see it as ctx.peer. Read at start."),
    "no client certificate asked for; ctx.peer is null",
  ),
  clientCertRequired: flag({
    default: false,
    doc: "With clientCaFile: refuse connections that present no client certificate (else they are served, " +
      "ctx.peer null).",
  }),
  hosts: textList({
    default: [], doc: "Self-signed: the certificate's DNS names and IP addresses.",
    expected: "a list of DNS names or IP addresses", entry: host,
  }),
  reloadInterval: duration({
    default: 10, min: 0.05, max: 3600, doc: "How often certFile and keyFile are checked for a new certificate.",
  }),
});
