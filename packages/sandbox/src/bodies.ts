// Request and response bodies: JSON, or a built-in kind in protobuf, as client-go's typed
// clients send and accept them (protobufjs and its descriptor are loaded on first use only).

import { parseKubeYaml } from "./kube-yaml.ts";
import { goJsonSyntaxError, goValueWord } from "./go-json.ts";
import { checkRequestSize } from "./limits.ts";
import type { ResourceDef } from "./resources.ts";
import { errors, jsonResponse } from "./status.ts";

/**
 * an object's response: protobuf for a built-in kind when the client's Accept puts it first (client-go's typed
 * clients), else JSON
 */
export async function objectResponse(req: Request, def: ResourceDef, body: any, code = 200): Promise<Response> {
  const first = req.headers.get("accept")?.split(",")[0]?.split(";")[0]?.trim().toLowerCase();
  if (first === "application/vnd.kubernetes.protobuf" && !def.crdName) {
    const { encodeProtobufObject } = await import("./protobuf-encode.ts");
    const bytes = encodeProtobufObject(body);
    if (bytes) return new Response(bytes, { status: code, headers: { "content-type": first } });
  }
  return jsonResponse(body, code);
}

/** a request body: JSON, or a built-in kind in protobuf (what client-go's typed clients send) */
export async function readJson(req: Request): Promise<any> {
  if (mediaType(req) === "application/vnd.kubernetes.protobuf") {
    // loaded on first use: `kobun dev` starts without protobufjs and its descriptor
    const { decodeProtobufBody } = await import("./protobuf.ts");
    return decodeProtobufBody(new Uint8Array(await req.arrayBuffer()));
  }
  const text = await req.text();
  checkRequestSize(text);
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw errors.badRequest(`the body of the request could not be decoded as JSON: ${(e as Error).message}`);
  }
}

/** the request's bytes (size-checked), or the decoded body of a protobuf one */
async function requestBytes(req: Request): Promise<Uint8Array | { decoded: any }> {
  if (mediaType(req) === "application/vnd.kubernetes.protobuf") {
    const { decodeProtobufBody } = await import("./protobuf.ts");
    return { decoded: decodeProtobufBody(new Uint8Array(await req.arrayBuffer())) };
  }
  const bytes = new Uint8Array(await req.arrayBuffer());
  checkRequestSize(new TextDecoder().decode(bytes));
  return bytes;
}

/** transformDecodeError's summary of a body it could not read: its first 30 bytes, as text if it opens an object */
function summary(bytes: Uint8Array): string {
  if (!bytes.length) return "<empty>";
  const head = bytes.subarray(0, 30);
  const text = bytes[0] === 0x7b ? new TextDecoder().decode(head) : Buffer.from(head).toString("hex");
  return bytes.length > 30 ? `${text} ...` : text;
}

const TYPE_META = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string '
  + '"json:\\"kind,omitempty\\"" }';

/**
 * A create's or an update's object, JSON or YAML (or protobuf). One the server cannot read is a 400 as
 * kube-apiserver words it: Go's JSON error, the kind it wanted, the start of what came ("the object provided is
 * unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: ..."); `null` is an
 * empty object.
 */
export async function readObject(req: Request, kind: string): Promise<any> {
  const bytes = await requestBytes(req);
  if (!(bytes instanceof Uint8Array)) return bytes.decoded;
  const refuse = (why: string) =>
    errors.badRequest(`the object provided is unrecognized (must be of type ${kind}): ${why} (${summary(bytes)})`);
  let json: Uint8Array = bytes;
  if (mediaType(req) === "application/yaml") {
    try {
      json = new TextEncoder().encode(JSON.stringify(parseKubeYaml(new TextDecoder().decode(bytes)) ?? null));
    } catch (e) {
      throw refuse((e as Error).message);
    }
  }
  const syntax = goJsonSyntaxError(json);
  if (syntax) throw refuse(`couldn't get version/kind; json parse error: ${syntax}`);
  const value = JSON.parse(new TextDecoder().decode(json));
  if (value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw refuse(`couldn't get version/kind; json parse error: json: cannot unmarshal ${goValueWord(value)} into Go `
      + `value of type ${TYPE_META}`);
  }
  for (const field of ["apiVersion", "kind"]) {
    const v = value[field];
    if (v === null || v === undefined || typeof v === "string") continue;
    throw refuse(`couldn't get version/kind; json parse error: json: cannot unmarshal ${goValueWord(v)} into Go struct `
      + `field .${field} of type string`);
  }
  return value;
}

/**
 * A patch (merge, strategic or JSON patch): one that is not JSON is an "invalid JSON patch"; a merge patch that
 * is no object, or a JSON patch no list, fails to decode, in Go's words.
 */
export async function readPatch(req: Request, type: string): Promise<any> {
  const bytes = await requestBytes(req);
  if (!(bytes instanceof Uint8Array)) return bytes.decoded;
  if (!bytes.length) return undefined;
  if (goJsonSyntaxError(bytes)) throw errors.badRequest("invalid JSON patch");
  const value = JSON.parse(new TextDecoder().decode(bytes));
  const list = type === "application/json-patch+json";
  const fits = list ? Array.isArray(value) : value === null || (typeof value === "object" && !Array.isArray(value));
  if (!fits) {
    const into = list ? "[]handlers.jsonPatchOp" : "map[string]interface {}";
    throw errors.badRequest(`error decoding patch: json: cannot unmarshal ${goValueWord(value)} into Go value of `
      + `type ${into}`);
  }
  return value;
}

/** DeleteOptions in a DELETE's body: one that is not JSON is refused with Go's words */
export async function readDeleteOptions(req: Request): Promise<any> {
  const bytes = await requestBytes(req);
  if (!(bytes instanceof Uint8Array)) return bytes.decoded;
  if (!new TextDecoder().decode(bytes).trim()) return undefined;
  const syntax = goJsonSyntaxError(bytes);
  if (syntax) throw errors.badRequest(`couldn't get version/kind; json parse error: ${syntax}`);
  return JSON.parse(new TextDecoder().decode(bytes));
}

export function mediaType(req: Request): string {
  return (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}
