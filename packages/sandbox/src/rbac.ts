// Service-account tokens and RBAC, as kube-apiserver with `--authorization-mode=RBAC` does them
// for what operators use. The TokenRequest API (`POST .../serviceaccounts/{name}/token`) issues
// an opaque random token for `system:serviceaccount:<ns>:<name>` (groups system:serviceaccounts,
// system:serviceaccounts:<ns>, system:authenticated); it stops authenticating when it expires or
// the ServiceAccount is deleted (uid-bound). Requests made with such a token are authorized from
// the stored roles / rolebindings / clusterroles / clusterrolebindings: verbs, apiGroups,
// resources (`res/sub`, `*`, `*/sub`), resourceNames; RoleBinding → Role or ClusterRole; subjects
// ServiceAccount / User / Group. Authorization runs before routing (an unknown resource is 403
// too, as on the real server). Discovery, /version and health are open to any authenticated user
// (system:discovery, system:public-info-viewer), as are self-reviews (system:basic-user).
// A denial is a 403 Forbidden Status with the real message and details. The admin token (and the
// no-token mode) is system:masters: everything is allowed.

import { queryBool } from "./list-options.ts";
import { generatedToken } from "./auth.ts";
import { nowTimestamp } from "./write-bodies.ts";
import { resourceKey } from "./resources.ts";
import type { Target } from "./routing.ts";
import { ApiStatusError, errors, qualified } from "./status.ts";
import type { Store } from "./store.ts";

export interface UserInfo {
  name: string;
  groups: string[];
}

export const MASTERS: UserInfo = { name: "system:admin", groups: ["system:masters", "system:authenticated"] };

const RBAC = "rbac.authorization.k8s.io";
const SA_KEY = resourceKey("", "serviceaccounts");

interface IssuedToken { ns: string; name: string; uid: string; expires: number }

/**
 * Tokens issued by the TokenRequest API, valid while unexpired and while their ServiceAccount (same uid) exists.
 */
export class ServiceAccountTokens {
  private readonly tokens = new Map<string, IssuedToken>();

  constructor(private readonly store: Store, private readonly audience: string) {}

  /** `POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token` with a TokenRequest body */
  request(ns: string, name: string, body: any): any {
    if (body === undefined || typeof body !== "object" || body === null || Array.isArray(body)) {
      throw errors.badRequest(
        "the object provided is unrecognized (must be of type TokenRequest): couldn't get version/kind; " +
          "json parse error: unexpected end of JSON input (<empty>)",
      );
    }
    if (body.kind !== undefined && body.kind !== "TokenRequest") {
      throw errors.badRequest(`the object provided is unrecognized (must be of type TokenRequest): ${body.kind}`);
    }
    const sa = this.store.get(SA_KEY, ns, name);
    const details = { name, kind: "serviceaccounts" };
    if (!sa) throw new ApiStatusError(404, "NotFound", `serviceaccounts "${name}" not found`, details);
    const spec = body.spec ?? {};
    const expirationSeconds = spec.expirationSeconds ?? 3600;
    const invalid = (detail: string) => new ApiStatusError(422, "Invalid",
      `TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: ${detail}`,
      {
        group: "authentication.k8s.io", kind: "TokenRequest",
        causes: [{ reason: "FieldValueInvalid", message: detail, field: "spec.expirationSeconds" }],
      });
    if (typeof expirationSeconds !== "number" || !Number.isInteger(expirationSeconds)) {
      throw invalid(`Invalid value: ${JSON.stringify(expirationSeconds)}: must be an integer`);
    }
    if (expirationSeconds < 600) {
      throw invalid(`Invalid value: ${expirationSeconds}: may not specify a duration less than 10 minutes`);
    }
    if (expirationSeconds > 2 ** 32) {
      throw invalid(`Invalid value: ${expirationSeconds}: may not specify a duration larger than 2^32 seconds`);
    }
    const token = generatedToken();
    const expires = Date.now() + expirationSeconds * 1000;
    this.tokens.set(token, { ns, name, uid: sa.metadata.uid, expires });
    const audiences = Array.isArray(spec.audiences) && spec.audiences.length ? spec.audiences : [this.audience];
    return {
      kind: "TokenRequest",
      apiVersion: "authentication.k8s.io/v1",
      metadata: { name, namespace: ns, creationTimestamp: nowTimestamp() },
      spec: { audiences, expirationSeconds, boundObjectRef: spec.boundObjectRef ?? null },
      status: { token, expirationTimestamp: new Date(expires).toISOString().replace(/\.\d{3}Z$/, "Z") },
    };
  }

  /** the user a bearer token stands for, or undefined if it is none of ours (or no longer valid) */
  authenticate(token: string): UserInfo | undefined {
    const t = this.tokens.get(token);
    if (!t) return undefined;
    const sa = this.store.get(SA_KEY, t.ns, t.name);
    if (Date.now() >= t.expires || !sa || sa.metadata.uid !== t.uid) {
      this.tokens.delete(token);
      return undefined;
    }
    return serviceAccountUser(t.ns, t.name);
  }
}

export function serviceAccountUser(ns: string, name: string): UserInfo {
  const groups = ["system:serviceaccounts", `system:serviceaccounts:${ns}`, "system:authenticated"];
  return { name: `system:serviceaccount:${ns}:${name}`, groups };
}

/** what a request asks to do, as the apiserver's RequestInfo sees it */
export type Attributes =
  | { resource: true; verb: string; group: string; resource_: string; sub: string; ns: string; name: string }
  | { resource: false; verb: string; path: string };

export function requestAttributes(
  target: Target, method: string, path: string, q: URLSearchParams,
): Attributes | "open" {
  const { type } = target;
  if (type === "discovery" || type === "group" || type === "groupVersion" || type === "openapi") return "open";
  if (target.type === "unknown") return { resource: false, verb: method.toLowerCase(), path };
  const watch = target.legacyWatch || queryBool(q.get("watch"));
  let name = target.name ?? "";
  let verb: string;
  switch (method) {
    case "GET": case "HEAD": verb = watch ? "watch" : name ? "get" : "list"; break;
    case "POST": verb = "create"; break;
    case "PUT": verb = "update"; break;
    case "PATCH": verb = "patch"; break;
    case "DELETE": verb = name ? "delete" : "deletecollection"; break;
    default: verb = method.toLowerCase();
  }
  // list/watch with `fieldSelector=metadata.name=x` are about that name (resourceNames apply)
  if ((verb === "list" || verb === "watch") && !name) {
    const fs = q.get("fieldSelector");
    if (fs) {
      for (const part of fs.split(",")) {
        const m = /^metadata\.name(==?)(.*)$/.exec(part.trim());
        if (m) name = m[2]!;
      }
    }
  }
  // `/api/v1/namespaces/{name}` is in the namespace it names
  const ns = target.group === "" && target.plural === "namespaces" && target.name ? target.name : target.ns;
  return { resource: true, verb, group: target.group, resource_: target.plural, sub: target.sub ?? "", ns, name };
}

/** Everything is allowed for system:masters; otherwise RBAC, or 403 Forbidden. */
export function authorize(store: Store, user: UserInfo, attrs: Attributes | "open"): void {
  if (attrs === "open" || user.groups.includes("system:masters")) return;
  if (attrs.resource && attrs.verb === "create" && attrs.sub === "" && !attrs.ns && isSelfReview(attrs)) return;
  const problems: string[] = [];
  if (allowedByRBAC(store, user, attrs, problems)) return;
  const reason = problems.length === 0 ? ""
    : `: rbac: RBAC: ${problems.length === 1 ? problems[0] : `[${problems.join(", ")}]`}`;
  if (!attrs.resource) {
    const message = `forbidden: User "${user.name}" cannot ${attrs.verb} path "${attrs.path}"${reason}`;
    throw new ApiStatusError(403, "Forbidden", message, {});
  }
  const { verb, group, resource_: resource, sub, ns, name } = attrs;
  const where = ns ? `in the namespace "${ns}"` : "at the cluster scope";
  const message = `${qualified(group, resource)}${name ? ` "${name}"` : ""} is forbidden: User "${user.name}" ` +
    `cannot ${verb} resource "${sub ? `${resource}/${sub}` : resource}" in API group "${group}" ${where}${reason}`;
  const details: Record<string, string> = {};
  if (name) details.name = name;
  if (group) details.group = group;
  details.kind = resource;
  throw new ApiStatusError(403, "Forbidden", message, details);
}

/** The self-reviews every authenticated user may create (system:basic-user). */
function isSelfReview(attrs: { group: string; resource_: string }): boolean {
  if (attrs.group === "authentication.k8s.io") return attrs.resource_ === "selfsubjectreviews";
  return attrs.group === "authorization.k8s.io"
    && (attrs.resource_ === "selfsubjectaccessreviews" || attrs.resource_ === "selfsubjectrulesreviews");
}

function appliesTo(subjects: any, user: UserInfo, bindingNs: string): boolean {
  if (!Array.isArray(subjects)) return false;
  return subjects.some((s: any) => {
    switch (s?.kind) {
      case "User": return s.name === user.name;
      case "Group": return user.groups.includes(s.name);
      case "ServiceAccount": {
        const saNs = s.namespace || bindingNs;
        return !!saNs && `system:serviceaccount:${saNs}:${s.name}` === user.name;
      }
      default: return false;
    }
  });
}

function has(list: unknown, value: string): boolean {
  return Array.isArray(list) && list.includes(value);
}

function ruleAllows(rule: any, attrs: Attributes): boolean {
  if (!(has(rule?.verbs, attrs.verb) || has(rule?.verbs, "*"))) return false;
  if (!attrs.resource) {
    return Array.isArray(rule.nonResourceURLs) && rule.nonResourceURLs.some((u: string) =>
      u === "*" || u === attrs.path || (u.endsWith("*") && attrs.path.startsWith(u.slice(0, -1))));
  }
  if (!(has(rule.apiGroups, attrs.group) || has(rule.apiGroups, "*"))) return false;
  const combined = attrs.sub ? `${attrs.resource_}/${attrs.sub}` : attrs.resource_;
  const resources: unknown[] = Array.isArray(rule.resources) ? rule.resources : [];
  if (!resources.some((r) => r === "*" || r === combined || (attrs.sub !== "" && r === `*/${attrs.sub}`))) return false;
  const names: unknown[] = Array.isArray(rule.resourceNames) ? rule.resourceNames : [];
  return names.length === 0 || names.includes(attrs.name);
}

function rulesOf(store: Store, roleRef: any, bindingNs: string, problems: string[]): any[] | undefined {
  const kind = roleRef?.kind;
  const name = String(roleRef?.name ?? "");
  const role = kind === "ClusterRole" ? store.get(resourceKey(RBAC, "clusterroles"), "", name)
    : kind === "Role" && bindingNs ? store.get(resourceKey(RBAC, "roles"), bindingNs, name) : undefined;
  if (!role) {
    problems.push(`${kind === "ClusterRole" ? "clusterrole" : "role"}.${RBAC} "${name}" not found`);
    return undefined;
  }
  return Array.isArray(role.rules) ? role.rules : [];
}

function allowedByRBAC(store: Store, user: UserInfo, attrs: Attributes, problems: string[]): boolean {
  for (const { body } of store.list(resourceKey(RBAC, "clusterrolebindings"))) {
    if (!appliesTo(body.subjects, user, "")) continue;
    const rules = rulesOf(store, { ...body.roleRef, kind: "ClusterRole" }, "", problems);
    if (rules?.some((r) => ruleAllows(r, attrs))) return true;
  }
  if (attrs.resource && attrs.ns) {
    for (const { body } of store.list(resourceKey(RBAC, "rolebindings"), attrs.ns)) {
      if (!appliesTo(body.subjects, user, attrs.ns)) continue;
      const rules = rulesOf(store, body.roleRef, attrs.ns, problems);
      if (rules?.some((r) => ruleAllows(r, attrs))) return true;
    }
  }
  return false;
}

/** every rule that applies to `user` in `ns` (ClusterRoleBindings, then the namespace's RoleBindings) */
export function rulesFor(store: Store, user: UserInfo, ns: string): any[] {
  const out: any[] = [];
  for (const { body } of store.list(resourceKey(RBAC, "clusterrolebindings"))) {
    if (!appliesTo(body.subjects, user, "")) continue;
    out.push(...(rulesOf(store, { ...body.roleRef, kind: "ClusterRole" }, "", []) ?? []));
  }
  if (ns) {
    for (const { body } of store.list(resourceKey(RBAC, "rolebindings"), ns)) {
      if (appliesTo(body.subjects, user, ns)) out.push(...(rulesOf(store, body.roleRef, ns, []) ?? []));
    }
  }
  return out;
}
