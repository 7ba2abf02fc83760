// Request and response bodies: JSON, or a built-in kind in protobuf, as client-go's typed
// clients send and accept them (protobufjs and its descriptor are loaded on first use only).

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

export function mediaType(req: Request): string {
  return (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}
