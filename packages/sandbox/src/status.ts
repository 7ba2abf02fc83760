// Kubernetes `Status` objects and the error type the sandbox throws to produce them.
// Every failure the sandbox returns is a real metav1.Status body with the reason and
// code kube-apiserver would use for the same situation.

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: { reason?: string; message?: string; field?: string }[];
  retryAfterSeconds?: number;
}

export interface StatusBody {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, unknown>;
  status: "Failure" | "Success";
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

const REASONS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Expired",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

/** The reason kube-apiserver uses for a bare HTTP code. */
export function reasonFor(code: number): string {
  return REASONS[code] ?? (code >= 500 ? "InternalError" : "Unknown");
}

export class ApiStatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
  /** the Status's ListMeta (an expired continue token's replacement) */
  listMeta?: { continue?: string };
  toStatus(): StatusBody {
    const body = statusBody(this.code, this.reason, this.message, this.details);
    if (this.listMeta) body.metadata = { ...this.listMeta };
    return body;
  }
}

export function statusBody(code: number, reason: string, message: string, details?: StatusDetails): StatusBody {
  const body: StatusBody = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code };
  if (!reason) delete body.reason; // as the real server sends some 500s (etcd's errors), with no reason at all
  if (details) {
    // omitempty: no `group: ""` (nor an empty name, kind or uid) on the wire
    body.details = Object.fromEntries(Object.entries(details).filter(([, v]) => v !== "" && v !== undefined));
  }
  return body;
}

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

export function errorResponse(err: ApiStatusError): Response {
  const headers: Record<string, string> = {};
  if (err.retryAfterSeconds !== undefined) headers["retry-after"] = String(err.retryAfterSeconds);
  if (err.code === 401) headers["www-authenticate"] = 'Bearer realm="kobun-sandbox"';
  return jsonResponse(err.toStatus(), err.code, headers);
}

/** `configmaps "x"` / `widgets.example.com "x"` — how the apiserver names a resource in messages. */
export function qualified(group: string, plural: string): string {
  return group ? `${plural}.${group}` : plural;
}

export const errors = {
  notFound(group: string, plural: string, name: string): ApiStatusError {
    const details = { name, group, kind: plural };
    return new ApiStatusError(404, "NotFound", `${qualified(group, plural)} "${name}" not found`, details);
  },
  namespaceNotFound(ns: string): ApiStatusError {
    return new ApiStatusError(404, "NotFound", `namespaces "${ns}" not found`, { name: ns, kind: "namespaces" });
  },
  pageNotFound(): ApiStatusError {
    return new ApiStatusError(404, "NotFound", "the server could not find the requested resource", {});
  },
  alreadyExists(group: string, plural: string, name: string): ApiStatusError {
    const details = { name, group, kind: plural };
    return new ApiStatusError(409, "AlreadyExists", `${qualified(group, plural)} "${name}" already exists`, details);
  },
  /** on a resource (its plural), or as rest.BeforeDelete says it, on a kind (then `resource` is the kind) */
  conflict(
    group: string, resource: string, name: string,
    why = "the object has been modified; please apply your changes to the latest version and try again",
  ): ApiStatusError {
    const message = `Operation cannot be fulfilled on ${qualified(group, resource)} "${name}": ${why}`;
    return new ApiStatusError(409, "Conflict", message, { name, group, kind: resource });
  },
  invalid(group: string, kind: string, name: string, field: string, detail: string): ApiStatusError {
    return new ApiStatusError(422, "Invalid", `${kind} "${name}" is invalid: ${field}: ${detail}`, {
      name, group, kind, causes: [{ reason: "FieldValueInvalid", message: detail, field }],
    });
  },
  badRequest(message: string): ApiStatusError {
    return new ApiStatusError(400, "BadRequest", message);
  },
  methodNotAllowed(): ApiStatusError {
    const message = "the server does not allow this method on the requested resource";
    return new ApiStatusError(405, "MethodNotAllowed", message, {});
  },
  unsupportedMediaType(type: string): ApiStatusError {
    return new ApiStatusError(415, "UnsupportedMediaType",
      "the body of the request was in an unknown format - accepted media types include: " +
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, " +
        `application/strategic-merge-patch+json (${type})`,
      {});
  },
  unauthorized(): ApiStatusError {
    return new ApiStatusError(401, "Unauthorized", "Unauthorized", undefined);
  },
  /**
   * A continue token whose revision is compacted: the etcd store's Status, with a token (`rv` -1) that continues
   * the list at the latest resourceVersion.
   */
  expiredContinue(inconsistentToken: string): ApiStatusError {
    const error = new ApiStatusError(410, "Expired",
      "The provided continue parameter is too old to display a consistent list result. " +
        "You can start a new list without the continue parameter, or use the continue token in this response to " +
        "retrieve the remainder of the results. Continuing with the provided token results in an inconsistent " +
        "list - objects that were created, modified, or deleted between the time the first chunk was returned " +
        "and now may show up in the list.");
    error.listMeta = { continue: inconsistentToken };
    return error;
  },
};
