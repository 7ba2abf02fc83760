// One ConversionReview (apiextensions.k8s.io/v1), answered by a CRD's `on.convert`: every
// object is converted to the desired version, or the whole review fails with a message (the
// API server then fails the request that needed the conversion). Never throws.

import type { ConversionSpec } from "../declaring/registry.ts";
import type { KubeObject } from "../kube/types.ts";
import type { Logger } from "../util/log.ts";
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

export function readConversionRequest(body: unknown): { uid: string; desiredAPIVersion: string; objects: KubeObject[] } {
  const review = body as { apiVersion?: unknown; kind?: unknown; request?: any } | null;
  if (typeof review !== "object" || review === null || review.kind !== "ConversionReview") throw new BadReviewError("expected a ConversionReview");
  if (review.apiVersion !== "apiextensions.k8s.io/v1") {
    throw new BadReviewError(`expected apiextensions.k8s.io/v1 (set conversionReviewVersions: ["v1"]), got ${JSON.stringify(review.apiVersion)}`);
  }
  const request = review.request;
  if (typeof request?.uid !== "string" || typeof request.desiredAPIVersion !== "string" || !Array.isArray(request.objects)) {
    throw new BadReviewError("the ConversionReview has no request with a uid, desiredAPIVersion and objects");
  }
  return request;
}

const versionOf = (apiVersion: string) => apiVersion.slice(apiVersion.lastIndexOf("/") + 1);

async function convertOne(spec: ConversionSpec, object: KubeObject, desired: string, logger: Logger): Promise<KubeObject> {
  if (object.apiVersion === desired) return object;
  const copy = structuredClone(object);
  let converted: KubeObject;
  if (typeof spec.convert === "function") converted = await spec.convert(copy, desired, { logger });
  else {
    const direction = `${versionOf(object.apiVersion ?? "")}->${versionOf(desired)}`;
    const fn = spec.convert[direction];
    if (!fn) throw new Error(`no conversion ${direction} for ${spec.wanted.name}.${spec.wanted.group} (on.convert has ${Object.keys(spec.convert).join(", ")})`);
    converted = await fn(copy, { logger });
  }
  if (typeof converted !== "object" || converted === null) throw new Error(`the conversion to ${desired} returned ${String(converted)}, not an object`);
  // The API server requires apiVersion = desired and the same metadata; kobun sets the version.
  return { ...converted, apiVersion: desired };
}

export async function convertReview(spec: ConversionSpec, request: ReturnType<typeof readConversionRequest>, logger: Logger): Promise<ConversionReviewBody> {
  const answer = (response: Omit<ConversionReviewBody["response"], "uid">): ConversionReviewBody =>
    ({ apiVersion: "apiextensions.k8s.io/v1", kind: "ConversionReview", response: { uid: request.uid, ...response } });
  try {
    const convertedObjects: KubeObject[] = [];
    for (const object of request.objects) convertedObjects.push(await convertOne(spec, object, request.desiredAPIVersion, logger));
    return answer({ convertedObjects, result: { status: "Success" } });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    logger.error("conversion failed", { resource: `${spec.wanted.name}.${spec.wanted.group}`, to: request.desiredAPIVersion, error: message });
    return answer({ convertedObjects: [], result: { status: "Failure", message: `conversion to ${request.desiredAPIVersion} failed; the operator's log has the details` } });
  }
}
