// URL routing: maps a request path to a discovery document or to a resource request
// (group, version, namespace, plural, name, subresource) and decides the audit-log verb.

export type Target =
  | { type: "discovery"; what: "api" | "apis" | "version" | "health" }
  | { type: "groupVersion"; group: string; version: string }
  | { type: "group"; group: string }
  | {
    type: "resource"; group: string; version: string; ns: string; plural: string; name?: string; sub?: string;
    legacyWatch: boolean;
  }
  | { type: "openapi"; version: "v2" | "v3"; rest: string[] }
  | { type: "unknown" };

export function route(pathname: string): Target {
  const segs = pathname.split("/").filter((s) => s.length > 0).map(decodeURIComponent);
  const [head, ...rest] = segs;
  if (head === "version" && rest.length === 0) return { type: "discovery", what: "version" };
  if (head === "openapi" && (rest[0] === "v2" || rest[0] === "v3")) {
    return { type: "openapi", version: rest[0], rest: rest.slice(1) };
  }
  if ((head === "healthz" || head === "readyz" || head === "livez") && rest.length <= 1) {
    return { type: "discovery", what: "health" };
  }
  let group = "";
  let version: string;
  let tail: string[];
  if (head === "api") {
    if (rest.length === 0) return { type: "discovery", what: "api" };
    version = rest[0]!;
    tail = rest.slice(1);
  } else if (head === "apis") {
    if (rest.length === 0) return { type: "discovery", what: "apis" };
    group = rest[0]!;
    if (rest.length === 1) return { type: "group", group };
    version = rest[1]!;
    tail = rest.slice(2);
  } else return { type: "unknown" };
  if (tail.length === 0) return { type: "groupVersion", group, version };
  let legacyWatch = false;
  if (tail[0] === "watch") {
    legacyWatch = true;
    tail = tail.slice(1);
  }
  let ns = "";
  if (tail[0] === "namespaces" && tail.length >= 3 && tail[2] !== "status" && tail[2] !== "finalize") {
    ns = tail[1]!;
    tail = tail.slice(2);
  }
  const [plural, name, sub, ...extra] = tail;
  if (!plural || extra.length) return { type: "unknown" };
  return { type: "resource", group, version, ns, plural, name, sub, legacyWatch };
}

/** the apiserver audit verb for a resource request */
export function verbOf(method: string, hasName: boolean, watch: boolean): string | undefined {
  switch (method) {
    case "GET":
    case "HEAD":
      return watch ? "watch" : hasName ? "get" : "list";
    case "POST": return hasName ? undefined : "create";
    case "PUT": return hasName ? "update" : undefined;
    case "PATCH": return hasName ? "patch" : undefined;
    case "DELETE": return hasName ? "delete" : "deletecollection";
    default: return undefined;
  }
}
