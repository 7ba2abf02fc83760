// A paged list's `continue` token, as the storage layer writes and reads it: base64url (unpadded) JSON of the
// first page's resourceVersion and the key to start after. A token the server cannot read is a 400 worded as
// kube-apiserver's DecodeContinue words it, behind "invalid continue token: ".

import { decodeRawUrlBase64, goJsonSyntaxError, goValueWord } from "./go-json.ts";
import { errors } from "./status.ts";

export interface ContinueToken { v: string; rv: number; start: string }

const VERSION = "meta.k8s.io/v1";

export function encodeToken(t: ContinueToken): string {
  return Buffer.from(JSON.stringify(t)).toString("base64url");
}

/** Go's json.Unmarshal into the token's struct: its fields by name in any case, the first type error said */
function unmarshalToken(json: any): ContinueToken | string {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return `json: cannot unmarshal ${goValueWord(json)} into Go value of type storage.continueToken`;
  }
  const token: ContinueToken = { v: "", rv: 0, start: "" };
  let failed: string | undefined;
  // a number Go cannot fit is named with its text ("number 1.5"); any other value by its kind
  const wrong = (field: string, value: unknown, type: string) => {
    const word = typeof value === "number" && type !== "string" ? `number ${value}` : goValueWord(value);
    failed ??= `json: cannot unmarshal ${word} into Go struct field continueToken.${field} of type ${type}`;
  };
  for (const [key, value] of Object.entries(json)) {
    const field = key.toLowerCase();
    if (value === null || !["v", "rv", "start"].includes(field)) continue;
    if (field === "rv") {
      if (typeof value === "number" && Number.isInteger(value)) token.rv = value;
      else wrong("rv", value, "int64");
    } else if (typeof value === "string") token[field as "v" | "start"] = value;
    else wrong(field, value, "string");
  }
  return failed ?? token;
}

/** Go's path.Clean of a rooted key */
function cleanKey(key: string): string {
  const parts: string[] = [];
  for (const part of key.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop(); else parts.push(part);
  }
  return `/${parts.join("/")}`;
}

function reason(s: string): string | ContinueToken {
  const decoded = decodeRawUrlBase64(s);
  if ("error" in decoded) return decoded.error;
  const syntax = goJsonSyntaxError(decoded.bytes);
  if (syntax) return syntax;
  const token = unmarshalToken(JSON.parse(Buffer.from(decoded.bytes).toString("utf8")));
  if (typeof token === "string") return token;
  if (token.v !== VERSION) return `server does not recognize this encoded version ${token.v}`;
  if (token.rv === 0) return `incorrect encoded start resourceVersion (version ${VERSION})`;
  if (!token.start) return `encoded start key empty (version ${VERSION})`;
  const key = token.start.startsWith("/") ? token.start : `/${token.start}`;
  if (cleanKey(key) !== key) return token.start;
  return token;
}

/** the token's resourceVersion and start key; a 400 for one the server cannot read */
export function decodeToken(s: string): ContinueToken {
  const token = reason(s);
  if (typeof token === "string") throw errors.badRequest(`invalid continue token: continue key is not valid: ${token}`);
  return token;
}
