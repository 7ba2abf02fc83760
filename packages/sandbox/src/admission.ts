// Admission and conversion webhooks, called by the sandbox as kube-apiserver calls them: for
// every write, the MutatingWebhookConfigurations' matching webhooks (by name order; their
// JSON Patches applied), then the Validating ones; for a CRD with `conversion.strategy:
// Webhook`, objects are stored at its storage version and converted on the way in and out.
// Each call is an AdmissionReview / ConversionReview v1 POSTed over HTTPS to the webhook's
// `clientConfig.url`, trusting only its `caBundle`, cut at `timeoutSeconds`, with
// `failurePolicy` deciding what a failed call means; which webhooks match is webhook-match.ts
// (rules, objectSelector, namespaceSelector, matchConditions); a dry run's review says
// `dryRun: true` and every review the write's `options` (admission-review.ts); with
// `webhookClient`, each call presents that client certificate and token; their `warnings` become the
// response's Warning headers (warnings.ts); Pod Security admission runs between the two
// (pod-security.ts). Not modelled: `service` clientConfigs (nothing to route to: a call
// failure), the reinvocation of mutators, a conversion webhook set after a watch began (its
// events stay unconverted), and the field ownership of server-side apply for what a mutator
// changed (its managedFields stay the applier's). Writes to /scale are reviewed too (scale()).

import { jsonPatch } from "./patch.ts";
import { resourceKey, type ResourceDef } from "./resources.ts";
import type { UserInfo } from "./rbac.ts";
import { ApiStatusError, reasonFor } from "./status.ts";
import type { Store } from "./store.ts";
import type { Objects, WriteOptions } from "./objects.ts";
import { present, requestedName } from "./write-bodies.ts";
import { DECODE, takeStringData } from "./secret-data.ts";
import { admitPodSecurity } from "./pod-security.ts";
import { addWarning } from "./warnings.ts";
import { conditionsMatch, webhookMatches, type WebhookMatch } from "./webhook-match.ts";
import { REVIEW_HEADERS, reviewRequest, type Call } from "./admission-review.ts";

/** A write's options, and the `options` its review carries (reviewOptions), when a client asked for it. */
/** What the sandbox presents to webhooks (SandboxOptions.webhookClient). */
type ClientCert = { cert?: string; key?: string; token?: string };

export type AdmittedWrite = WriteOptions & { review?: Record<string, unknown> };

const ADMISSION = "admissionregistration.k8s.io";
const SCALE_KIND = { group: "autoscaling", version: "v1", kind: "Scale" };

interface Webhook extends WebhookMatch {
  name: string;
  clientConfig?: { url?: string; caBundle?: string; service?: unknown };
  failurePolicy?: "Fail" | "Ignore";
  timeoutSeconds?: number;
}

/** POSTs a review to a webhook; throws a plain Error saying why the call failed. */
async function post(
  url: string | undefined, caBundle: string | undefined, timeoutSeconds: number, review: unknown, client?: ClientCert,
): Promise<any> {
  if (!url) throw new Error("the sandbox calls only url clientConfigs (a service has nothing to route to here)");
  const ca = caBundle ? Buffer.from(caBundle, "base64").toString() : undefined;
  const response = await fetch(url, {
    method: "POST",
    headers: { ...REVIEW_HEADERS, ...(client?.token ? { authorization: `Bearer ${client.token}` } : {}) },
    body: JSON.stringify(review),
    signal: AbortSignal.timeout(timeoutSeconds * 1000),
    tls: { ...(ca ? { ca } : {}), ...(client?.cert && client.key ? { cert: client.cert, key: client.key } : {}) },
  } as RequestInit).catch((error: Error) => {
    throw new Error(error.name === "TimeoutError" ? "context deadline exceeded" : error.message);
  });
  if (!response.ok) throw new Error(`the server responded with HTTP ${response.status}`);
  return response.json();
}

export class SandboxAdmission {
  constructor(
    private readonly store: Store, private readonly objects: Objects, private readonly clientCert?: ClientCert,
  ) {}

  private hooks(kind: "validating" | "mutating"): Webhook[] {
    return this.store
      .list(resourceKey(ADMISSION, `${kind}webhookconfigurations`))
      .flatMap(({ body }) => (body.webhooks ?? []) as Webhook[]);
  }

  /** Runs the mutating then the validating webhooks on `call`; returns the object to store. */
  async admit(call: Call): Promise<any> {
    // As in kube-apiserver, writes of webhook configurations are never sent to webhooks.
    if (call.def.group === ADMISSION) return call.object;
    let object = call.object;
    for (const kind of ["mutating", "validating"] as const) {
      // kube-apiserver's built-in PodSecurity plugin judges what the mutators made, before the validators.
      if (kind === "validating") {
        admitPodSecurity({ ...call, group: call.def.group, plural: call.def.plural, object }, this.store);
      }
      for (const hook of this.hooks(kind)) {
        if (kind === "mutating" && call.operation === "DELETE") continue;
        if (!webhookMatches(hook, { ...call, object }, this.store)) continue;
        const response = await this.review(hook, { ...call, object });
        if (!response) continue;
        for (const warning of response.warnings ?? []) if (typeof warning === "string") addWarning(warning);
        if (!response.allowed) throw denied(hook.name, response.status);
        if (kind === "mutating" && response.patch) {
          if (response.patchType !== "JSONPatch") {
            throw internal(hook.name, `unsupported patch type ${JSON.stringify(response.patchType)}`);
          }
          object = jsonPatch(object, JSON.parse(Buffer.from(response.patch, "base64").toString()));
        }
      }
    }
    return object;
  }

  /** The webhook's response, or undefined when its matchConditions skip it or it failed under failurePolicy Ignore. */
  private async review(hook: Webhook, call: Call): Promise<any> {
    const request = reviewRequest(call);
    try {
      if (!conditionsMatch(hook, request)) return undefined;
    } catch (error) {
      if (hook.failurePolicy === "Ignore") return undefined;
      // kube-apiserver refuses the write as Forbidden, naming the expression
      const resource = call.def.group ? `${call.def.plural}.${call.def.group}` : call.def.plural;
      const name = request.name ?? "";
      const message = `${resource} "${name}" is forbidden: ${(error as Error).message}`;
      throw new ApiStatusError(403, "Forbidden", message, { name, group: call.def.group, kind: call.def.plural });
    }
    try {
      const review = { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request };
      const { url, caBundle } = hook.clientConfig ?? {};
      const body = await post(url, caBundle, hook.timeoutSeconds ?? 10, review, this.clientCert);
      if (body?.response?.uid !== request.uid) {
        const got = JSON.stringify(body?.response?.uid);
        throw new Error(`expected response.uid=${JSON.stringify(request.uid)}, got ${got}`);
      }
      return body.response;
    } catch (error) {
      if (hook.failurePolicy === "Ignore") return undefined;
      const detail = `Post "${hook.clientConfig?.url}": ${(error as Error).message}`;
      throw internal(hook.name, `failed to call webhook: ${detail}`);
    }
  }

  /** A write to /scale, reviewed as kube-apiserver does: an UPDATE of "scale" whose objects are the Scales. */
  async scale(
    def: ResourceDef, version: string, ns: string, oldScale: any, newScale: any,
    review: { dryRun: boolean; user: UserInfo; options: Record<string, unknown> },
  ): Promise<any> {
    const { dryRun, user, options } = review;
    const call = { def, version, ns, operation: "UPDATE" as const, object: newScale, oldObject: oldScale, user };
    return this.admit({ ...call, sub: "scale", dryRun, options, kind: SCALE_KIND });
  }

  /** The CRD's webhook conversion and storage version, when it has one. */
  private conversion(def: ResourceDef): { storage: string; webhook: any } | undefined {
    if (!def.crdName) return undefined;
    const crd = this.store.get(resourceKey("apiextensions.k8s.io", "customresourcedefinitions"), "", def.crdName);
    if (crd?.spec?.conversion?.strategy !== "Webhook") return undefined;
    const storage = (crd.spec.versions ?? []).find((v: any) => v.storage)?.name ?? def.versions[0]!;
    return { storage, webhook: crd.spec.conversion.webhook ?? {} };
  }

  /** Stored bodies as served at `version`, converted by the CRD's webhook when it has one. */
  async presentAll(def: ResourceDef, version: string, bodies: any[]): Promise<any[]> {
    const conversion = this.conversion(def);
    const served = bodies.map((body) => present(def, conversion?.storage ?? version, body));
    if (!conversion || conversion.storage === version || served.length === 0) {
      return bodies.map((body) => present(def, version, body));
    }
    return this.convert(def, conversion.webhook, served, version);
  }

  /** A LIST's items (already served at `version` by list.ts), converted when the CRD has a webhook. */
  async listItems(def: ResourceDef, version: string, items: any[]): Promise<any[]> {
    const conversion = this.conversion(def);
    return !conversion || conversion.storage === version ? items : this.presentAll(def, version, items);
  }

  /** For a watch at `version`: its events' conversion, when the CRD has a webhook (as of the watch's start). */
  watchConverter(def: ResourceDef, version: string): ((object: any) => Promise<any>) | undefined {
    const conversion = this.conversion(def);
    return !conversion || conversion.storage === version ? undefined : (object) => this.present(def, version, object);
  }

  async present(def: ResourceDef, version: string, body: any): Promise<any> {
    return (await this.presentAll(def, version, [body]))[0];
  }

  private async convert(def: ResourceDef, webhook: any, objects: any[], version: string): Promise<any[]> {
    const desiredAPIVersion = `${def.group}/${version}`;
    const uid = crypto.randomUUID();
    const fail = (message: string) => new ApiStatusError(
      500, "InternalError", `conversion webhook for ${objects[0].apiVersion}, Kind=${def.kind} failed: ${message}`,
    );
    let body: any;
    try {
      const request = { uid, desiredAPIVersion, objects };
      const review = { apiVersion: "apiextensions.k8s.io/v1", kind: "ConversionReview", request };
      body = await post(webhook.clientConfig?.url, webhook.clientConfig?.caBundle, 30, review, this.clientCert);
    } catch (error) {
      throw fail(`Post "${webhook.clientConfig?.url}": ${(error as Error).message}`);
    }
    const response = body?.response;
    if (response?.uid !== uid) throw fail("the response uid does not match the request");
    if (response.result?.status !== "Success") throw fail(response.result?.message ?? "no message");
    const converted = response.convertedObjects ?? [];
    if (converted.length !== objects.length || converted.some((o: any) => o?.apiVersion !== desiredAPIVersion)) {
      throw fail(`expected ${objects.length} objects of ${desiredAPIVersion}`);
    }
    return converted;
  }

  /** The version a write at `version` is stored at, and the body converted to it. */
  private async toStorage(def: ResourceDef, version: string, body: any): Promise<{ version: string; body: any }> {
    const conversion = this.conversion(def);
    if (!conversion || conversion.storage === version) return { version, body };
    const [converted] = await this.convert(def, conversion.webhook, [present(def, version, body)], conversion.storage);
    return { version: conversion.storage, body: converted };
  }

  async create(
    def: ResourceDef, version: string, ns: string, input: any, user: UserInfo, options: AdmittedWrite = {},
  ): Promise<any> {
    const dryRun = options.dryRun ?? false;
    const review = options.review ? { options: options.review } : {};
    const object = await this.admit({
      def, version, ns, operation: "CREATE", object: named(def, takeStringData(def, input, DECODE)),
      oldObject: undefined, user, sub: undefined, dryRun, ...review,
    });
    const stored = await this.toStorage(def, version, object);
    return this.objects.create(def, stored.version, ns, stored.body, options);
  }

  async update(
    def: ResourceDef, version: string, ns: string, name: string, input: any, user: UserInfo,
    sub?: "status", options: AdmittedWrite = {},
  ): Promise<any> {
    const oldObject = await this.present(def, version, this.objects.get(def, ns, name));
    const dryRun = options.dryRun ?? false;
    const review = options.review ? { options: options.review } : {};
    const object = await this.admit({
      def, version, ns, operation: "UPDATE", object: takeStringData(def, input, DECODE), oldObject, user, sub, dryRun,
      ...review,
    });
    const stored = await this.toStorage(def, version, object);
    return this.objects.update(def, stored.version, ns, name, stored.body, sub, options);
  }

  /**
   * A patch that names no resourceVersion applies to whatever is stored: when another write
   * landed while the webhooks were asked, it is applied and admitted again on the new object
   * (kube-apiserver's GuaranteedUpdate), not refused with a conflict.
   */
  async patch(
    def: ResourceDef, version: string, ns: string, name: string, contentType: string, patchBody: unknown,
    user: UserInfo, sub?: "status", options: AdmittedWrite = {},
  ): Promise<any> {
    const dryRun = options.dryRun ?? false;
    const review = options.review ? { options: options.review } : {};
    for (let attempt = 1; ; attempt++) {
      const oldObject = await this.present(def, version, this.objects.get(def, ns, name));
      const merged = this.objects.patched(def, version, ns, name, contentType, patchBody, oldObject, options.strict);
      const decoded = takeStringData(def, merged, { via: "patch", contentType, patch: patchBody });
      const patched = this.objects.uidOfPatched(def, ns, name, decoded, sub);
      const object = await this.admit({
        def, version, ns, operation: "UPDATE", object: patched, oldObject, user, sub, dryRun, ...review,
      });
      const stored = await this.toStorage(def, version, object);
      const raced = this.objects.get(def, ns, name).metadata.resourceVersion !== oldObject.metadata.resourceVersion;
      const precondition = patched.metadata?.resourceVersion !== oldObject.metadata.resourceVersion;
      if (raced && !precondition && attempt < 5) continue;
      return this.objects.update(def, stored.version, ns, name, stored.body, sub, options);
    }
  }

  async delete(
    def: ResourceDef, version: string, ns: string, name: string, options: unknown, user: UserInfo, dryRun = false,
    review?: Record<string, unknown>,
  ): Promise<any> {
    const oldObject = await this.present(def, version, this.objects.get(def, ns, name));
    await this.admit({
      def, version, ns, operation: "DELETE", object: undefined, oldObject, user, sub: undefined, dryRun,
      ...(review ? { options: review } : {}),
    });
    return this.objects.delete(def, ns, name, options, dryRun);
  }
}


/**
 * The object with its generateName made into a name before the webhooks see it, as kube-apiserver
 * does (the review's `name` is that one; objects.ts keeps a name it is given).
 */
function named(def: ResourceDef, input: any): any {
  const meta = input?.metadata;
  if (typeof meta !== "object" || meta === null || meta.name || !meta.generateName) return input;
  return { ...input, metadata: { ...meta, name: requestedName(def, meta) } };
}

/** kube-apiserver's ToStatusErr: the webhook's Status, its message prefixed, a code of at least 400. */
function denied(name: string, status: any): ApiStatusError {
  const code = typeof status?.code === "number" && status.code >= 400 ? status.code : 400;
  const why = status?.message || status?.reason;
  const message = `admission webhook "${name}" denied the request${why ? `: ${why}` : " without explanation"}`;
  return new ApiStatusError(code, status?.reason || reasonFor(code), message);
}

function internal(name: string, detail: string): ApiStatusError {
  const message = `Internal error occurred: failed calling webhook "${name}": ${detail}`;
  return new ApiStatusError(500, "InternalError", message);
}
