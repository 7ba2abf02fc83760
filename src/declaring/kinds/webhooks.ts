// Admission and conversion webhooks (`on.validate`, `on.mutate`, `on.convert`): what they see and
// take, the error a validator throws to refuse, the specs the registry keeps, the checks of their
// options, their ids (DNS labels), and their `on.*` functions. admission/ serves them.

import { parseSelector, type KubeObject, type ResourceSelector } from "../../kube/index.ts";
import type { Logger } from "../../util/index.ts";
import type { MetaMatchers, ValueMatcher } from "../filters.ts";
import { checkOptionNames, everyKeyOf, RegistrationError, shownSelector, type Wanted } from "../registration.ts";

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
  /**
   * What the API server does when the webhook cannot answer (unreachable, or cut at `timeoutSeconds`: then kobun
   * answers itself, refusing with 504 under "Fail", allowing with a warning under "Ignore"). A handler that throws
   * something other than an AdmissionError is an answer, not a failure to answer: refused (403) under either.
   * Default "Fail".
   */
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

/** A validating or mutating webhook: served by admission/, never watched. */
export interface WebhookSpec {
  id: string;
  kind: "validate" | "mutate";
  selector: ResourceSelector;
  wanted: Wanted;
  fn: ValidateFn | MutateFn;
  options: AdmissionOptions;
}

/** A CRD's conversion: one function for every direction, or a table of them. */
export interface ConversionSpec {
  selector: ResourceSelector;
  wanted: Wanted;
  convert: ConvertFn | ConversionTable;
}

const OPERATIONS: readonly AdmissionOperation[] = ["CREATE", "UPDATE", "DELETE", "CONNECT"];

const OPTION_NAMES = everyKeyOf<AdmissionOptions>()([
  "id", "operations", "failurePolicy", "sideEffects", "timeoutSeconds", "labels", "annotations", "matchConditions",
  "subresources", "field", "value",
]);

export function checkAdmissionOptions(where: string, options: AdmissionOptions): void {
  checkOptionNames(where, options, OPTION_NAMES);
  const { operations, failurePolicy, sideEffects, timeoutSeconds } = options;
  if (operations !== undefined
    && (!Array.isArray(operations) || operations.length === 0 || operations.some((o) => !OPERATIONS.includes(o)))) {
    throw new Error(`${where}: operations must be a non-empty list of ${OPERATIONS.join(", ")}`);
  }
  if (failurePolicy !== undefined && failurePolicy !== "Fail" && failurePolicy !== "Ignore") {
    throw new Error(`${where}: failurePolicy must be "Fail" or "Ignore"`);
  }
  if (sideEffects !== undefined && sideEffects !== "None" && sideEffects !== "NoneOnDryRun") {
    throw new Error(`${where}: sideEffects must be "None" or "NoneOnDryRun"`);
  }
  if (timeoutSeconds !== undefined
    && !(Number.isInteger(timeoutSeconds) && timeoutSeconds >= 1 && timeoutSeconds <= 30)) {
    throw new Error(`${where}: timeoutSeconds must be an integer from 1 to 30 (the API server's range)`);
  }
  for (const c of options.matchConditions ?? []) {
    if (typeof c?.name !== "string" || typeof c?.expression !== "string") {
      throw new Error(`${where}: each of matchConditions needs a name and a CEL expression`);
    }
  }
  const { subresources, field } = options;
  if (subresources !== undefined && (!Array.isArray(subresources)
    || subresources.some((s) => typeof s !== "string" || !/^(\*|[a-z][a-z0-9-]*)$/.test(s)))) {
    throw new Error(`${where}: subresources must be a list of subresource names like "status", or ["*"] for all`);
  }
  const path = typeof field === "string" ? field.split(".").filter(Boolean) : field;
  if (field !== undefined && (!Array.isArray(path) || path.length === 0 || path.some((k) => typeof k !== "string"))) {
    throw new Error(`${where}: field must be a dotted path like "spec.size" or a list of keys`);
  }
  if (options.value !== undefined && field === undefined) throw new Error(`${where}: value needs a field to match`);
}

// A Kopf-style function name (`validate_size`) is a fine handler id, but a webhook's id names it
// in DNS, so it is made a DNS label (`validate-size`).
/** A webhook id: a DNS label (lowercase letters, digits, "-"; at most 63), as its configuration names it. */
export const WEBHOOK_ID = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * The id a webhook function's name gives, made a DNS label: `validate_size` and `validateSize`
 * → `validate-size`; undefined when nothing of the name is left.
 */
export function webhookIdOf(name: string): string | undefined {
  const id = name
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .slice(0, 63)
    .replace(/^-+|-+$/g, "");
  return id || undefined;
}

/** on.validate, on.mutate and on.convert, recording into `store`. */
export function webhooksOn(store: { webhooks: WebhookSpec[]; conversions: ConversionSpec[] }) {
  const addWebhook = (
    kind: WebhookSpec["kind"], selector: ResourceSelector, fn: ValidateFn | MutateFn, options: AdmissionOptions,
  ): void => {
    if (typeof fn !== "function") {
      throw new Error(`on.${kind}(${shownSelector(selector)}, ...) needs a handler function`);
    }
    const wanted = parseSelector(selector);
    const n = store.webhooks.filter((w) => w.kind === kind).length + 1;
    const id = options.id ?? (fn.name && fn.name !== "anonymous" ? webhookIdOf(fn.name) : undefined) ?? `${kind}-${n}`;
    // The id names the webhook (a label of its DNS name) and its URL path.
    if (!WEBHOOK_ID.test(id)) {
      const fix = JSON.stringify(webhookIdOf(id) ?? `${kind}-${n}`);
      throw new Error(
        `on.${kind} handler ${JSON.stringify(id)}: the id must be lowercase letters, digits and "-", at most 63 ` +
          `(it names the webhook): pass { id: ${fix} }`,
      );
    }
    if (store.webhooks.some((w) => w.id === id)) {
      throw new Error(`a webhook with id ${JSON.stringify(id)} is already registered: pass a distinct { id }`);
    }
    checkAdmissionOptions(`on.${kind} handler ${id}`, options);
    store.webhooks.push({ id, kind, selector, wanted, fn, options });
  };
  const addConversion = (selector: ResourceSelector, convert: ConvertFn | ConversionTable): void => {
    const wanted = parseSelector(selector);
    if (!wanted.group) {
      throw new Error(
        `on.convert(${shownSelector(selector)}): name the CRD's resource with its group, ` +
          `like "kobunexamples.kobun.dev"`,
      );
    }
    const isTable = typeof convert === "object" && convert !== null
      && Object.keys(convert).every((k) => /^[^->]+->[^->]+$/.test(k));
    if (typeof convert !== "function" && !isTable) {
      throw new Error(
        `on.convert(${shownSelector(selector)}): pass a function, or a table like { "v1->v2": fn, "v2->v1": fn }`,
      );
    }
    if (store.conversions.some((c) => c.wanted.group === wanted.group && c.wanted.name === wanted.name)) {
      throw new Error(`on.convert: ${wanted.name}.${wanted.group} already has a conversion`);
    }
    store.conversions.push({ selector, wanted, convert });
  };
  return {
    validate: (selector: ResourceSelector, fn: ValidateFn, options: AdmissionOptions = {}) => {
      addWebhook("validate", selector, fn, options);
      return fn;
    },
    mutate: (selector: ResourceSelector, fn: MutateFn, options: AdmissionOptions = {}) => {
      addWebhook("mutate", selector, fn, options);
      return fn;
    },
    convert: (selector: ResourceSelector, convert: ConvertFn | ConversionTable, ...more: unknown[]) => {
      // JavaScript would drop a third argument ({ id }, a webhook's options): refused, as any unknown option is.
      if (more.length > 0) throw new RegistrationError(`on.convert(${shownSelector(selector)}): it takes no options`);
      addConversion(selector, convert);
    },
  };
}
