// The self-reviews kubectl asks before acting (`kubectl auth can-i`, `auth can-i --list`,
// `auth whoami`): SelfSubjectAccessReview, SelfSubjectRulesReview and SelfSubjectReview,
// answered from the same authorization as real requests (rbac.ts) and never stored.
// The rules of the bootstrap roles every authenticated user has on a real server
// (system:basic-user, system:discovery, system:public-info-viewer) are listed too.

import type { ResourceDef } from "./resources.ts";
import { authorize, requestAttributes, rulesFor, type UserInfo } from "./rbac.ts";
import { route } from "./routing.ts";
import { ApiStatusError, errors } from "./status.ts";
import type { Store } from "./store.ts";

const BASIC_USER_RULES = [
  { verbs: ["create"], apiGroups: ["authentication.k8s.io"], resources: ["selfsubjectreviews"] },
  {
    verbs: ["create"], apiGroups: ["authorization.k8s.io"],
    resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
  },
];
const DISCOVERY_RULES = [
  {
    verbs: ["get"],
    nonResourceURLs: [
      "/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz",
      "/version", "/version/",
    ],
  },
  { verbs: ["get"], nonResourceURLs: ["/healthz", "/livez", "/readyz", "/version", "/version/"] },
];
const ADMIN_RULES = [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }, { verbs: ["*"], nonResourceURLs: ["*"] }];

function reviewBody(body: any, kind: string): any {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw errors.badRequest(`the object provided is unrecognized (must be of type ${kind})`);
  }
  if (body.kind !== undefined && body.kind !== kind) {
    throw errors.badRequest(`the object provided is unrecognized (must be of type ${kind}): ${body.kind}`);
  }
  return body;
}

function allowed(store: Store, user: UserInfo, spec: any): boolean {
  let attrs: Parameters<typeof authorize>[2];
  if (spec?.resourceAttributes) {
    const a = spec.resourceAttributes;
    attrs = {
      resource: true, verb: String(a.verb ?? ""), group: String(a.group ?? ""), resource_: String(a.resource ?? ""),
      sub: String(a.subresource ?? ""), ns: String(a.namespace ?? ""), name: String(a.name ?? ""),
    };
  } else if (spec?.nonResourceAttributes) {
    const { path = "", verb = "" } = spec.nonResourceAttributes;
    const open = requestAttributes(route(String(path)), "GET", String(path), new URLSearchParams());
    attrs = open === "open" && verb === "get" ? "open" : { resource: false, verb: String(verb), path: String(path) };
  } else {
    throw new ApiStatusError(422, "Invalid",
      'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": ' +
        "exactly one of nonResourceAttributes or resourceAttributes must be specified",
      { group: "authorization.k8s.io", kind: "SelfSubjectAccessReview" });
  }
  try {
    authorize(store, user, attrs);
    return true;
  } catch (e) {
    if (e instanceof ApiStatusError && e.code === 403) return false;
    throw e;
  }
}

/** `POST /apis/{authorization,authentication}.k8s.io/v1/selfsubject*reviews`: the answer, as the real server's 201 */
export function answerReview(store: Store, def: ResourceDef, user: UserInfo, input: unknown): any {
  const body = reviewBody(input, def.kind);
  const meta = { creationTimestamp: null };
  const apiVersion = `${def.group}/v1`;
  switch (def.plural) {
    case "selfsubjectaccessreviews": {
      const ok = allowed(store, user, body.spec);
      const status = ok ? { allowed: true } : { allowed: false };
      return { kind: def.kind, apiVersion, metadata: meta, spec: body.spec, status };
    }
    case "selfsubjectrulesreviews": {
      const ns = String(body.spec?.namespace ?? "");
      const rules = [
        ...(user.groups.includes("system:masters") ? ADMIN_RULES : []), ...rulesFor(store, user, ns),
        ...BASIC_USER_RULES, ...DISCOVERY_RULES,
      ];
      const resourceRules = rules.filter((r) => !r.nonResourceURLs)
        .map(({ verbs, apiGroups, resources, resourceNames }) =>
          ({ verbs, apiGroups, resources, ...(resourceNames ? { resourceNames } : {}) }));
      const nonResourceRules = rules.filter((r) => r.nonResourceURLs)
        .map(({ verbs, nonResourceURLs }) => ({ verbs, nonResourceURLs }));
      const status = { resourceRules, nonResourceRules, incomplete: false };
      return { kind: def.kind, apiVersion, metadata: meta, spec: body.spec ?? {}, status };
    }
    default: {
      const status = { userInfo: { username: user.name, groups: user.groups } };
      return { kind: def.kind, apiVersion, metadata: meta, status };
    }
  }
}
