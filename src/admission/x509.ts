// Self-signed certificates for the webhook server, made in-process with WebCrypto (ECDSA
// P-256 / SHA-256) and the DER encoders of der.ts: a CA, and a serving certificate signed by
// it for the given DNS names and IP addresses. The API server trusts the CA through the
// `caBundle` of the webhook configurations; nothing else ever needs to.

import {
  bits, boolean, explicit, octets, oid, pem, sequence, set, small, time, tlv, unsigned, utf8, type Der,
} from "./der.ts";

export interface CertificatePair {
  /** PEM of the certificate. */
  cert: string;
  /** PEM (PKCS#8) of its private key. */
  key: string;
}

export interface IssuedCertificates {
  ca: CertificatePair;
  serving: CertificatePair;
  /** When the serving certificate expires. */
  notAfter: Date;
}

const EC_KEY = { name: "ECDSA", namedCurve: "P-256" } as const;
const SIGN = { name: "ECDSA", hash: "SHA-256" } as const;
const ECDSA_WITH_SHA256 = sequence(oid("1.2.840.10045.4.3.2"));

const extension = (id: string, critical: boolean, value: Der): Der =>
  sequence(oid(id), ...(critical ? [boolean(true)] : []), octets(value));
const commonName = (cn: string): Der => sequence(set(sequence(oid("2.5.4.3"), utf8(cn))));

/** A SubjectAltName entry: an IPv4/IPv6 address as iPAddress [7], anything else as dNSName [2]. */
function altName(host: string): Der {
  const ip = ipBytes(host);
  return ip ? tlv(0x87, ip) : tlv(0x82, new TextEncoder().encode(host));
}

function ipBytes(host: string): Uint8Array<ArrayBuffer> | undefined {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (v4) return Uint8Array.from(v4.slice(1).map(Number));
  if (!host.includes(":")) return undefined;
  const [head = "", tail = ""] = host.replace(/^\[|\]$/g, "").split("::");
  const words = (s: string) => (s ? s.split(":").map((w) => parseInt(w, 16)) : []);
  const left = words(head);
  const right = words(tail);
  const all = [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  return Uint8Array.from(all.flatMap((w) => [w >> 8, w & 0xff]));
}

/** WebCrypto signs ECDSA as r‖s (IEEE P1363); X.509 wants SEQUENCE { INTEGER r, INTEGER s }. */
function derSignature(raw: ArrayBuffer): Der {
  const bytes = new Uint8Array(raw);
  const half = bytes.length / 2;
  return sequence(unsigned(bytes.subarray(0, half)), unsigned(bytes.subarray(half)));
}

interface Subject {
  cn: string;
  keys: CryptoKeyPair;
  extensions: Der[];
}

async function certificate(
  subject: Subject, issuer: { cn: string; key: CryptoKey }, notBefore: Date, notAfter: Date,
): Promise<Der> {
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0]! &= 0x7f;
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", subject.keys.publicKey));
  const tbs = sequence(
    explicit(0, small(2)), unsigned(serial), ECDSA_WITH_SHA256, commonName(issuer.cn),
    sequence(time(notBefore), time(notAfter)), commonName(subject.cn), spki,
    explicit(3, sequence(...subject.extensions)),
  );
  const signature = await crypto.subtle.sign(SIGN, issuer.key, tbs);
  return sequence(tbs, ECDSA_WITH_SHA256, bits(derSignature(signature)));
}

const privateKeyPem = async (key: CryptoKey) =>
  pem("PRIVATE KEY", new Uint8Array(await crypto.subtle.exportKey("pkcs8", key)));
const newKeys = () => crypto.subtle.generateKey(EC_KEY, true, ["sign", "verify"]) as Promise<CryptoKeyPair>;

/**
 * A fresh CA and a serving certificate for `hosts` (DNS names or IP addresses; the first is
 * its common name), valid from a minute ago (clock skew) for `days`.
 */
export async function issueCertificates(
  hosts: readonly string[], days = 365, name = "kobun-webhooks",
): Promise<IssuedCertificates> {
  if (hosts.length === 0) throw new Error("a serving certificate needs at least one host name or IP address");
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(notBefore.getTime() + days * 86_400_000);
  const caKeys = await newKeys();
  const caName = `${name}-ca`;
  const ca = await certificate({
    cn: caName, keys: caKeys,
    extensions: [
      extension("2.5.29.19", true, sequence(boolean(true))),
      // keyCertSign (bit 5) and cRLSign (bit 6)
      extension("2.5.29.15", true, bits(Uint8Array.of(0x06), 1)),
    ],
  }, { cn: caName, key: caKeys.privateKey }, notBefore, notAfter);
  const servingKeys = await newKeys();
  const serving = await certificate({
    cn: hosts[0]!, keys: servingKeys,
    extensions: [
      extension("2.5.29.19", true, sequence()),
      // digitalSignature (bit 0)
      extension("2.5.29.15", true, bits(Uint8Array.of(0x80), 7)),
      extension("2.5.29.37", false, sequence(oid("1.3.6.1.5.5.7.3.1"))),
      extension("2.5.29.17", false, sequence(...hosts.map(altName))),
    ],
  }, { cn: caName, key: caKeys.privateKey }, notBefore, notAfter);
  return {
    ca: { cert: pem("CERTIFICATE", ca), key: await privateKeyPem(caKeys.privateKey) },
    serving: { cert: pem("CERTIFICATE", serving), key: await privateKeyPem(servingKeys.privateKey) },
    notAfter,
  };
}
