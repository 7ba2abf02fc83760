// Sub-handlers (Kopf's): during its call, a handler registers children with
// `ctx.subhandler(id, fn, options)`; each is a handler of its own for the cycle, with the id
// `<parent id>/<id>`, its own progress record, retries, backoff, timeout and outcome. This file
// takes the registrations and checks them; due.ts runs them once their parent has returned.
// Must never run a sub-handler, nor remember one across cycles: the parent registers them again
// each time it is called, and the progress records on the object are the only memory, as for
// every handler (so a restarted operator continues where the last one stopped).

import { ERROR_MODES, PermanentError } from "../declaring/index.ts";
import type { HandlerContext, HandlerSpec, SubhandlerOptions } from "../declaring/index.ts";
import { progressKey } from "./progress.ts";

/** What one call of a handler registered; `close()` when the call has returned. */
export interface Registrations {
  readonly specs: HandlerSpec[];
  close(): void;
}

const OPTIONS: ReadonlySet<string> = new Set(["retries", "backoff", "timeout", "errors"]);

/**
 * Gives `ctx` its `subhandler` for the call of `parent` about to start. A wrong registration
 * throws a PermanentError from the call: the parent fails for good, as retrying would not fix it.
 * `handlerIds` are the resource's handlers: a sub-handler must not share a progress record with one.
 */
export function openRegistrations(
  parent: HandlerSpec, ctx: HandlerContext, handlerIds: readonly string[],
): Registrations {
  const specs: HandlerSpec[] = [];
  let open = true;
  ctx.subhandler = (id, fn, options = {}) => {
    const where = `ctx.subhandler(${JSON.stringify(id)}) in handler ${parent.id}`;
    if (!open) throw new Error(`${where}: called after the handler returned; register sub-handlers during its call`);
    if (typeof id !== "string" || id === "" || id.includes("/")) {
      throw new PermanentError(`${where}: the id must be a non-empty string without "/" (ids nest as parent/child)`);
    }
    if (typeof fn !== "function") throw new PermanentError(`${where}: the sub-handler must be a function`);
    const full = `${parent.id}/${id}`;
    if (specs.some((s) => s.id === full)) {
      throw new PermanentError(`${where}: the id is registered twice in one call; give each sub-handler its own id`);
    }
    refuseSharedKey(where, full, [parent.id, ...specs.map((s) => s.id), ...handlerIds]);
    specs.push({
      id: full, kind: parent.kind, selector: parent.selector, fn, options: checked(where, options),
      ...(parent.field ? { field: parent.field } : {}), order: parent.order,
    });
  };
  return { specs, close: () => void (open = false) };
}

/**
 * Progress annotation keys are ids made qualified names ("/" and other characters become ".",
 * ends trimmed), so two ids can map to one key and share one record: one would be taken as done
 * while the other still retries. Refused, naming both, rather than made unique by a hash: the keys
 * already stored on objects stay the ones read.
 */
function refuseSharedKey(where: string, full: string, others: readonly string[]): void {
  const key = progressKey(full);
  const other = others.find((id) => progressKey(id) === key);
  if (other === undefined) return;
  throw new PermanentError(
    `${where}: its progress key ${key} is that of ${JSON.stringify(other)} (${JSON.stringify(full)} and ` +
      `${JSON.stringify(other)} would share one record); give the sub-handler an id of letters and digits`,
  );
}

/** The options, checked as a handler's are; anything else is refused by name. */
function checked(where: string, options: SubhandlerOptions): SubhandlerOptions {
  if (typeof options !== "object" || options === null) {
    throw new PermanentError(`${where}: options must be an object like { retries: 3, backoff: 10 }`);
  }
  for (const key of Object.keys(options)) {
    if (!OPTIONS.has(key)) {
      throw new PermanentError(`${where}: unknown option ${JSON.stringify(key)} (known: ${[...OPTIONS].join(", ")})`);
    }
  }
  if (options.errors !== undefined && !ERROR_MODES.includes(options.errors)) {
    throw new PermanentError(`${where}: errors must be "temporary", "permanent" or "ignored"`);
  }
  const { retries, backoff, timeout } = options;
  if (retries !== undefined && !(Number.isInteger(retries) && retries >= 1)) {
    throw new PermanentError(`${where}: retries must be a whole number of attempts ≥ 1`);
  }
  if (backoff !== undefined && !(typeof backoff === "number" && backoff >= 0)) {
    throw new PermanentError(`${where}: backoff must be a number of seconds ≥ 0`);
  }
  if (timeout !== undefined && !(typeof timeout === "number" && timeout > 0)) {
    throw new PermanentError(`${where}: timeout must be a number of seconds > 0 (leave it out for none)`);
  }
  return { ...options };
}

/** `ctx.subhandler` outside its handler's call (in a `when` filter): refused, saying where it belongs. */
export function subhandlerOutsideCall(): never {
  throw new Error("ctx.subhandler: only during the call of a create/update/delete/resume/field handler");
}
