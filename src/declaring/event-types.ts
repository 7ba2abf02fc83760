// What ctx.event offers a handler of any kind (Kubernetes Events, posted by posting/). No
// behaviour here.

import type { KubeObject } from "../kube/index.ts";

/**
 * Posts Kubernetes Events; identical ones are counted into one, and each object has a budget (posting/). The
 * object may be left out: it is then the handled one (in an activity, which handles none, it must be given).
 * The message may be left out too (empty).
 */
export interface EventRecorder {
  /** A `Normal` Event. */
  info(object: KubeObject, reason: string, message?: string): void;
  info(reason: string, message?: string): void;
  /** A `Warning` Event. */
  warn(object: KubeObject, reason: string, message?: string): void;
  warn(reason: string, message?: string): void;
  /** A `Warning` Event at level error (what `posting.level: error` still posts). */
  error(object: KubeObject, reason: string, message?: string): void;
  error(reason: string, message?: string): void;
  /** An Event of any `type` the API server takes (Kopf's `kopf.event(..., type=...)`); level info when "Normal". */
  post(type: string, object: KubeObject, reason: string, message?: string): void;
  post(type: string, reason: string, message?: string): void;
  /**
   * A `Warning` Event (level error) about a caught error (Kopf's `kopf.exception`): the reason is the error's
   * class name (`options.reason` instead), the message its message (after `options.message` when given).
   */
  exception(error: unknown, object?: KubeObject, options?: ExceptionEventOptions): void;
  exception(error: unknown, options?: ExceptionEventOptions): void;
}

/** What `event.exception` may say besides the error. */
export interface ExceptionEventOptions {
  /** Default: the error's class name (`TypeError`, `MyError`). */
  reason?: string;
  /** Written before the error's message: "Some exception:" → "Some exception: Exception text." */
  message?: string;
  /** Default "Warning"; Kopf's `kopf.exception` posts "Error". */
  type?: string;
}
