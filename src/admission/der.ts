// The few ASN.1 DER encoders an X.509 certificate needs (X.690): tag-length-value and the
// types certificates use. Bun and WebCrypto make keys and signatures but no certificates, so
// kobun writes the certificate itself rather than shelling out to openssl (a `FROM scratch`
// image has none) or adding a library for ~100 lines of encoding.

export type Der = Uint8Array<ArrayBuffer>;

function length(n: number): number[] {
  if (n < 0x80) return [n];
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return [0x80 | bytes.length, ...bytes];
}

export function tlv(tag: number, ...parts: Der[]): Der {
  const size = parts.reduce((sum, p) => sum + p.length, 0);
  const head = [tag, ...length(size)];
  const out = new Uint8Array(head.length + size);
  out.set(head, 0);
  let at = head.length;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export const sequence = (...parts: Der[]): Der => tlv(0x30, ...parts);
export const set = (...parts: Der[]): Der => tlv(0x31, ...parts);
export const explicit = (n: number, ...parts: Der[]): Der => tlv(0xa0 | n, ...parts);
export const octets = (bytes: Der): Der => tlv(0x04, bytes);
export const boolean = (value: boolean): Der => tlv(0x01, Uint8Array.of(value ? 0xff : 0));
export const utf8 = (text: string): Der => tlv(0x0c, new TextEncoder().encode(text));

/** A non-negative INTEGER from big-endian bytes: leading zeros dropped, one added when the top bit is set. */
export function unsigned(bytes: Der): Der {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const trimmed = bytes.subarray(start);
  return tlv(0x02, ...((trimmed[0]! & 0x80) !== 0 ? [Uint8Array.of(0), trimmed] : [trimmed]));
}

export const small = (n: number): Der => unsigned(Uint8Array.of(n));

/** A BIT STRING of whole bytes, with `unused` trailing bits of the last one. */
export const bits = (bytes: Der, unused = 0): Der => tlv(0x03, Uint8Array.of(unused), bytes);

export function oid(dotted: string): Der {
  const [a, b, ...rest] = dotted.split(".").map(Number) as [number, number, ...number[]];
  const body = [40 * a + b];
  for (const n of rest) {
    const groups: number[] = [];
    for (let v = n; ; v = Math.floor(v / 128)) {
      groups.unshift(v % 128);
      if (v < 128) break;
    }
    body.push(...groups.map((g, i) => (i < groups.length - 1 ? g | 0x80 : g)));
  }
  return tlv(0x06, Uint8Array.from(body));
}

/** UTCTime until 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
export function time(date: Date): Der {
  const iso = date.toISOString().replace(/[-:T]/g, "").replace(/\.\d{3}/, "");
  const utc = date.getUTCFullYear() < 2050;
  return tlv(utc ? 0x17 : 0x18, new TextEncoder().encode(utc ? iso.slice(2) : iso));
}

export function pem(label: string, der: Der): string {
  const base64 = Buffer.from(der).toString("base64").replace(/.{64}/g, "$&\n").replace(/\n$/, "");
  return `-----BEGIN ${label}-----\n${base64}\n-----END ${label}-----\n`;
}
