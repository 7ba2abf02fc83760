// Patch application: JSON merge patch (RFC 7386) and JSON patch (RFC 6902); strategic merge
// patch is in strategic.ts. Errors are 422 Invalid / 415 as the real server.

import { ApiStatusError } from "./status.ts";

/**
 * A deep copy of stored data. Objects are JSON (parsed bodies, YAML, decoded protobuf), so a
 * plain walk does it: structuredClone costs several times more per write on Bun. Anything that
 * is not a plain object or array (a Date, a typed array) still goes to structuredClone.
 */
export function clone<T>(v: T): T {
  if (typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = clone(v[i]);
    return out as T;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return structuredClone(v);
  const out: Record<string, unknown> = {};
  for (const k in v) {
    const value = clone((v as Record<string, unknown>)[k]);
    // a body's own "__proto__" key (JSON.parse makes one) stays a key, as structuredClone keeps it
    if (k === "__proto__") {
      Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
    }
    else out[k] = value;
  }
  return out as T;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObj(a)) {
    if (!isObj(b)) return false;
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/** RFC 7386 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return clone(patch);
  const out: Record<string, unknown> = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function invalid(message: string): ApiStatusError {
  return new ApiStatusError(422, "Invalid", message, {});
}

function parsePointer(p: string): string[] {
  if (p === "") return [];
  if (!p.startsWith("/")) throw invalid(`invalid JSON pointer: "${p}"`);
  return p.slice(1).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function getAt(doc: unknown, path: string[]): { found: boolean; value?: unknown } {
  let cur: unknown = doc;
  for (const seg of path) {
    if (Array.isArray(cur)) {
      const i = Number(seg);
      if (!/^\d+$/.test(seg) || i >= cur.length) return { found: false };
      cur = cur[i];
    } else if (isObj(cur)) {
      if (!Object.prototype.hasOwnProperty.call(cur, seg)) return { found: false };
      cur = cur[seg];
    } else return { found: false };
  }
  return { found: true, value: cur };
}

const missingPath = (op: string, raw: string) =>
  invalid(`${op} operation does not apply: doc is missing path: "${raw}"`);

function parentOf(doc: unknown, path: string[], op: string, raw: string): { parent: any; key: string } {
  if (!path.length) throw missingPath(op, raw);
  const p = getAt(doc, path.slice(0, -1));
  if (!p.found || (typeof p.value !== "object" || p.value === null)) throw missingPath(op, raw);
  return { parent: p.value, key: path[path.length - 1]! };
}

function removeAt(doc: unknown, path: string[], op: string, raw: string): unknown {
  const { parent, key } = parentOf(doc, path, op, raw);
  if (Array.isArray(parent)) {
    const i = Number(key);
    if (!/^\d+$/.test(key) || i >= parent.length) throw missingPath(op, raw);
    return parent.splice(i, 1)[0];
  }
  if (!Object.prototype.hasOwnProperty.call(parent, key)) throw missingPath(op, raw);
  const v = parent[key];
  delete parent[key];
  return v;
}

function addAt(doc: unknown, path: string[], value: unknown, raw: string): unknown {
  if (!path.length) return value;
  const { parent, key } = parentOf(doc, path, "add", raw);
  if (Array.isArray(parent)) {
    const i = key === "-" ? parent.length : Number(key);
    if ((key !== "-" && !/^\d+$/.test(key)) || i > parent.length) {
      throw invalid(`add operation does not apply: index out of bounds: "${raw}"`);
    }
    parent.splice(i, 0, value);
  } else parent[key] = value;
  return doc;
}

/** RFC 6902; returns a new document */
export function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) {
    const word = typeof ops === "object" && ops !== null ? "object" : typeof ops === "boolean" ? "bool" : typeof ops;
    throw new ApiStatusError(400, "BadRequest",
      `error decoding patch: json: cannot unmarshal ${word} into Go value of type []handlers.jsonPatchOp`);
  }
  let doc = clone(target);
  for (const raw of ops) {
    const op = raw as { op?: string; path?: string; from?: string; value?: unknown };
    const pathStr = String(op.path ?? "");
    const path = parsePointer(pathStr);
    switch (op.op) {
      case "add": doc = addAt(doc, path, clone(op.value), pathStr); break;
      case "remove": removeAt(doc, path, "remove", pathStr); break;
      case "replace": {
        // json-patch v4 (kube-apiserver's) reads a missing key of an object as null: replace adds it there
        const at = getAt(doc, path);
        const parentAt = path.length ? getAt(doc, path.slice(0, -1)) : undefined;
        if (!at.found && !(parentAt?.found && isObj(parentAt.value))) {
          throw invalid(`replace operation does not apply: doc is missing key: ${pathStr}`);
        }
        if (!path.length) { doc = clone(op.value); break; }
        const { parent, key } = parentOf(doc, path, "replace", pathStr);
        parent[Array.isArray(parent) ? Number(key) : key] = clone(op.value);
        break;
      }
      case "move": {
        const from = String(op.from ?? "");
        const v = removeAt(doc, parsePointer(from), "move", from);
        doc = addAt(doc, path, v, pathStr);
        break;
      }
      case "copy": {
        const from = String(op.from ?? "");
        const fromPath = parsePointer(from);
        const at = getAt(doc, fromPath);
        // json-patch v4 copies a missing key of an object as null (as replace reads it)
        const parentAt = fromPath.length ? getAt(doc, fromPath.slice(0, -1)) : undefined;
        if (!at.found && !(parentAt?.found && isObj(parentAt.value))) {
          throw invalid(`copy operation does not apply: doc is missing from path: "${from}"`);
        }
        doc = addAt(doc, path, at.found ? clone(at.value) : null, pathStr);
        break;
      }
      case "test": {
        const at = getAt(doc, path);
        if (!at.found || !deepEqual(at.value, op.value)) throw invalid(`testing value ${pathStr} failed: test failed`);
        break;
      }
      default:
        throw new ApiStatusError(400, "BadRequest", `Unexpected kind: ${String(op.op)}`);
    }
  }
  return doc;
}

/**
 * A PATCH request's JSON patch: one that decodes but does not apply (a missing path, a failed test, an unknown op)
 * is a 422 without jsonpatch's words, as kube-apiserver answers it; a webhook's patch keeps them (admission.ts)
 */
export function requestJsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) return jsonPatch(target, ops); // the decoding error: a 400 in Go's words
  try {
    return jsonPatch(target, ops);
  } catch (e) {
    if (!(e instanceof ApiStatusError)) throw e;
    throw new ApiStatusError(422, "Invalid", "the server rejected our request due to an error in our request", {});
  }
}
