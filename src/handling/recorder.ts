// `ctx.event`: what handlers call to post Kubernetes Events, over the operator's EventPoster
// (posting/, which queues, correlates and sends them). The object may be left out: it is the
// handled one, or, in an activity (no handled object), a TypeError saying to name one. Bad
// arguments (no reason, a reason that is not a string) are a TypeError at the call: they are the
// handler's bug, and a silently dropped Event would hide it. The poster itself never throws.

import type { EventRecorder, ExceptionEventOptions } from "../declaring/index.ts";
import type { KubeObject } from "../kube/index.ts";
import type { EventPoster } from "../posting/index.ts";
import type { LogLevel } from "../util/index.ts";

type Args = [KubeObject | string | undefined | null, string?, string?];

/** A recorder posting through `poster`, about `handled` when the call names no object. */
export function eventRecorder(poster: EventPoster, handled?: KubeObject): EventRecorder {
  const send = (type: string, level: LogLevel, call: string, args: Args): void => {
    const [object, reason, message] = typeof args[0] === "string"
      ? [handled, args[0], args[1]] : [args[0] ?? handled, args[1], args[2]];
    if (!object || typeof object !== "object") {
      throw new TypeError(`ctx.event.${call}: name the object the Event is about (no object is handled here)`);
    }
    if (typeof reason !== "string" || reason === "") {
      throw new TypeError(`ctx.event.${call}: the reason must be a non-empty string, got ${JSON.stringify(reason)}`);
    }
    if (message !== undefined && typeof message !== "string") {
      throw new TypeError(`ctx.event.${call}: the message must be a string, got ${typeof message}`);
    }
    poster.post(object, type, reason, message ?? "", level);
  };
  return {
    info: (...args: Args) => send("Normal", "info", "info", args),
    warn: (...args: Args) => send("Warning", "warn", "warn", args),
    error: (...args: Args) => send("Warning", "error", "error", args),
    post: (type: string, ...args: Args) => {
      if (typeof type !== "string" || type === "" || /\s/.test(type)) {
        throw new TypeError(`ctx.event.post: the type must be one word ("Normal", "Warning", "SomeType"), got `
          + JSON.stringify(type));
      }
      send(type, type === "Normal" ? "info" : "warn", "post", args);
    },
    exception: (error: unknown, ...rest: [(KubeObject | ExceptionEventOptions)?, ExceptionEventOptions?]) => {
      const [object, options = {}] = isObject(rest[0]) || (rest[0] == null && rest.length > 1)
        ? [rest[0] ?? handled, rest[1]] : [handled, rest[0] as ExceptionEventOptions | undefined];
      const text = error instanceof Error ? error.message : String(error);
      const message = options.message ? `${options.message} ${text}` : text;
      send(options.type ?? "Warning", "error", "exception", [object, options.reason ?? classOf(error), message]);
    },
  } as EventRecorder;
}

/** Kopf's reason for an exception: its class's name (a class that does not set `name` still has one). */
function classOf(error: unknown): string {
  if (error instanceof Error) return error.name !== "Error" ? error.name : (error.constructor?.name || "Error");
  return "Error";
}

function isObject(value: unknown): value is KubeObject {
  return typeof value === "object" && value !== null && "metadata" in value;
}

/** For handlers run without an operator around them (a processor built without a poster, in tests). */
export const NO_EVENTS: EventRecorder = {
  info() {}, warn() {}, error() {}, post() {}, exception() {},
};
