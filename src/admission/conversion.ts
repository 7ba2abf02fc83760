// One ConversionReview (apiextensions.k8s.io/v1), answered by a CRD's `on.convert`: every
// object is converted to the desired version, or the whole review fails with a message (the
// API server then fails the request that needed the conversion). Never throws.

import type { ConversionSpec } from "../declaring/index.ts";
import type { KubeObject } from "../kube/index.ts";
import type { Logger } from "../util/index.ts";
import { BadReviewError } from "./review.ts";

export interface ConversionReviewBody {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "ConversionReview";
  response: {
    uid: string;
    convertedObjects: KubeObject[];
    result: { status: "Success" | "Failure"; message?: string };
  };
}

export interface ConversionRequest {
  uid: string;
  desiredAPIVersion: string;
  objects: KubeObject[];
}

export function readConversionRequest(body: unknown): ConversionRequest {
  const review = body as { apiVersion?: unknown; kind?: unknown; request?: any } | null;
  if (typeof review !== "object" || review === null || review.kind !== "ConversionReview") {
    throw new BadReviewError("expected a ConversionReview");
  }
  if (review.apiVersion !== "apiextensions.k8s.io/v1") {
    const got = JSON.stringify(review.apiVersion);
    throw new BadReviewError(`expected apiextensions.k8s.io/v1 (set conversionReviewVersions: ["v1"]), got ${got}`);
  }
  const request = review.request;
  const complete = typeof request?.uid === "string" && typeof request.desiredAPIVersion === "string"
    && Array.isArray(request.objects);
  if (!complete) {
    throw new BadReviewError("the ConversionReview has no request with a uid, desiredAPIVersion and objects");
  }
  return request;
}

const versionOf = (apiVersion: string) => apiVersion.slice(apiVersion.lastIndexOf("/") + 1);

/** A direction the table lacks: kobun's own words, quoting no object, so the API server (and kubectl) get them. */
class NoConversionError extends Error {}

async function convertOne(
  spec: ConversionSpec, object: KubeObject, desired: string, logger: Logger,
): Promise<KubeObject> {
  if (object.apiVersion === desired) return object;
  const copy = structuredClone(object);
  let converted: KubeObject;
  if (typeof spec.convert === "function") converted = await spec.convert(copy, desired, { logger });
  else {
    const direction = `${versionOf(object.apiVersion ?? "")}->${versionOf(desired)}`;
    const fn = spec.convert[direction];
    if (!fn) {
      const known = Object.keys(spec.convert).join(", ");
      const resource = `${spec.wanted.name}.${spec.wanted.group}`;
      throw new NoConversionError(`no conversion ${direction} for ${resource} (on.convert has ${known})`);
    }
    converted = await fn(copy, { logger });
  }
  if (typeof converted !== "object" || converted === null) {
    throw new Error(`the conversion to ${desired} returned ${String(converted)}, not an object`);
  }
  // The API server requires apiVersion = desired and the same metadata; kobun sets the version.
  return { ...converted, apiVersion: desired };
}

export async function convertReview(
  spec: ConversionSpec, request: ConversionRequest, logger: Logger,
): Promise<ConversionReviewBody> {
  const answer = (response: Omit<ConversionReviewBody["response"], "uid">): ConversionReviewBody =>
    ({ apiVersion: "apiextensions.k8s.io/v1", kind: "ConversionReview", response: { uid: request.uid, ...response } });
  try {
    const convertedObjects: KubeObject[] = [];
    for (const object of request.objects) {
      convertedObjects.push(await convertOne(spec, object, request.desiredAPIVersion, logger));
    }
    return answer({ convertedObjects, result: { status: "Success" } });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const to = request.desiredAPIVersion;
    logger.error("conversion failed", { resource: `${spec.wanted.name}.${spec.wanted.group}`, to, error: message });
    const failure = error instanceof NoConversionError
      ? message : `conversion to ${to} failed; the operator's log has the details`;
    return answer({ convertedObjects: [], result: { status: "Failure", message: failure } });
  }
}
