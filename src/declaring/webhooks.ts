// The shapes of admission and conversion handlers (`on.validate`, `on.mutate`, `on.convert`)
// and the error a validator throws to refuse. No behaviour: the admission/ room serves them.

import type { KubeObject } from "../kube/index.ts";
import type { Logger } from "../util/index.ts";
import type { MetaMatchers, ValueMatcher } from "./filters.ts";

/** The operation an admission request is for (`on.validate`/`on.mutate` `operations`). */
export type AdmissionOperation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

/** The `request` of an AdmissionReview v1, as the API server sends it. */
export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  requestKind?: { group: string; version: string; kind: string };
  requestResource?: { group: string; version: string; resource: string };
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: AdmissionOperation;
  userInfo: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  object?: KubeObject | null;
  oldObject?: KubeObject | null;
  dryRun?: boolean;
  /** The write's CreateOptions, UpdateOptions (also for a patch) or DeleteOptions, with its kind and apiVersion. */
  options?: Record<string, unknown> | null;
}

/**
 * The client certificate the caller presented on the webhook's TLS connection (the API server's
 * identity, when it is configured to present one), as verified against `webhooks.clientCaFile`.
 * A name's attributes are keyed by their short names (CN, O, OU, ...); a repeated one is a list.
 */
export interface AdmissionPeer {
  subject: Readonly<Record<string, string | readonly string[]>>;
  issuer: Readonly<Record<string, string | readonly string[]>>;
  /** Hexadecimal, as the certificate has it. */
  serialNumber: string;
  /** As OpenSSL prints them: "Mar  7 17:12:20 2026 GMT". */
  validFrom: string;
  validTo: string;
  /** SHA-256 of the certificate's DER, colon-separated hex pairs. */
  fingerprint256: string;
}

/** What validators and mutators see: the request, its parts at hand, and a signal cut at the timeout. */
export interface AdmissionContext<T extends object = KubeObject> {
  request: AdmissionRequest;
  operation: AdmissionOperation;
  /** The object as it would be stored: mutators change it in place. On DELETE, the old object. */
  object: T;
  oldObject: T | undefined;
  userInfo: AdmissionRequest["userInfo"];
  dryRun: boolean;
  subresource: string | undefined;
  name: string | undefined;
  namespace: string | undefined;
  logger: Logger;
  /** Aborted when the webhook's timeoutSeconds is reached. */
  signal: AbortSignal;
  /** Warnings shown to the user (kubectl prints them) even when the request is allowed. */
  warnings: string[];
  /**
   * The HTTP headers of the review's request, names lowercased (`content-type`, `user-agent`, and
   * `authorization` when the caller authenticates with a token or a password).
   */
  headers: Readonly<Record<string, string>>;
  /**
   * The caller's verified client certificate; null when `webhooks.clientCaFile` is not set (none
   * is asked for) or the caller presented none.
   */
  peer: AdmissionPeer | null;
}

/** One operation of an RFC 6902 JSON Patch. */
export interface JsonPatchOperation {
  op: "add" | "remove" | "replace";
  path: string;
  value?: unknown;
}

/** A validator returns nothing (allowed) or throws AdmissionError (refused). */
export type ValidateFn<T extends object = KubeObject> = (ctx: AdmissionContext<T>) => unknown;
/** A mutator changes `ctx.object` in place, or returns a JSON Patch of its own. */
export type MutateFn<T extends object = KubeObject> =
  (ctx: AdmissionContext<T>) => void | JsonPatchOperation[] | Promise<void | JsonPatchOperation[]>;

/**
 * A webhook's options, as in the Validating/MutatingWebhookConfiguration it becomes.
 * labels/annotations filter objects like the other handlers' filters; labels with plain string
 * values also become the webhook's `objectSelector`, so the API server does not even call.
 */
export interface AdmissionOptions {
  /**
   * Names the webhook (`<id>.<operator name>.kobun.dev`) and its path: lowercase letters, digits, "-". Default: the
   * function name made so (`validate_size` → `validate-size`).
   */
  id?: string;
  /** Default ["CREATE", "UPDATE"]. */
  operations?: readonly AdmissionOperation[];
  /** What the API server does when the webhook cannot answer. Default "Fail". */
  failurePolicy?: "Fail" | "Ignore";
  /** Default "None": the handler must not change anything outside the object. */
  sideEffects?: "None" | "NoneOnDryRun";
  /** 1..30 seconds (the API server's range); the handler is cut when it is reached. Default 10. */
  timeoutSeconds?: number;
  labels?: MetaMatchers;
  annotations?: MetaMatchers;
  /** CEL conditions the API server evaluates before calling (`matchConditions`). */
  matchConditions?: readonly { name: string; expression: string }[];
  /**
   * Also for these subresources, e.g. ["status"]; ["*"] for all of them (status, scale, ...). A
   * request for a subresource not listed is allowed without calling the handler.
   */
  subresources?: readonly string[];
  /**
   * Only objects that have this field (a dotted path, or a list of keys): the object of CREATE and
   * UPDATE, the old object of DELETE. Others are allowed without calling the handler.
   */
  field?: string | readonly string[];
  /** With `field`: only when its value equals this, or is PRESENT/ABSENT, or satisfies this predicate. */
  value?: ValueMatcher;
}

/** Converts one object to `toVersion` (e.g. "kobun.dev/v2"); returns the converted body. */
export type ConvertFn =
  (object: KubeObject, toVersion: string, ctx: { logger: Logger }) => KubeObject | Promise<KubeObject>;
/** Or one function per direction: { "v1->v2": fn, "v2->v1": fn } (versions without the group). */
export type ConversionTable =
  Record<string, (object: KubeObject, ctx: { logger: Logger }) => KubeObject | Promise<KubeObject>>;

/** Thrown by a validator (or mutator) to refuse the request with this message. */
export class AdmissionError extends Error {
  override readonly name = "AdmissionError";
  /** The HTTP code in the refusal's Status (default 400 Bad Request; 403, 422 are usual too). */
  readonly code: number;
  readonly warnings: readonly string[];
  constructor(message: string, options: { code?: number; warnings?: readonly string[] } = {}) {
    super(message);
    this.code = options.code ?? 400;
    this.warnings = options.warnings ?? [];
  }
}
