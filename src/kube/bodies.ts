// What the transport sends and reads besides headers: query strings, request bodies (strings
// and bytes as they are, anything else as JSON) and answers (JSON, or the text when not JSON).

import { parseWithoutManagedFields } from "./managed-fields.ts";

export type Query = Record<string, string | number | boolean | undefined>;

export function queryString(query: Query): string {
  let text = "";
  for (const key in query) {
    const value = query[key];
    if (value === undefined) continue;
    text += (text ? "&" : "?") + key + "=" + encodeURIComponent(String(value));
  }
  return text;
}

/** A request's body as sent: strings and bytes as they are, anything else as JSON. */
export function encodedBody(
  options: { body?: unknown; contentType?: string },
): { body?: string | Uint8Array; contentType?: string } {
  const { body, contentType = "application/json" } = options;
  if (body === undefined) return {};
  if (typeof body === "string" || body instanceof Uint8Array) return { body, contentType };
  return { body: JSON.stringify(body), contentType };
}

/** parsedBody, the object's managedFields cut first (managed-fields.ts). */
export function parsedSlimBody<T>(text: string): T {
  if (!text) return undefined as T;
  try {
    return parseWithoutManagedFields(text, "object") as T;
  } catch {
    return text as T;
  }
}

/**
 * An answer's body: its JSON, nothing for an empty one, or the text when it is not JSON (e.g. /healthz: the
 * caller asked for it).
 */
export function parsedBody<T>(text: string): T {
  if (!text) return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    return text as T;
  }
}
