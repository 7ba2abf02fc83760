// simulate()'s options, checked before anything runs. A test that misspells an option, or gives
// one the wrong shape, is refused with what was expected: ignored, it would run something other
// than what the test meant and could pass (`schedule: 200` for `schedules`, a fault copied from a
// report and then mistyped, a master seed whose reported replay seed would itself be refused).

import type { Registry } from "../declaring/index.ts";
import type { Fault } from "./simulate-fault-kinds.ts";
import { SCHEDULE_SEED } from "./simulate-schedule.ts";

const OPTIONS = [
  "scenario", "registry", "crds", "namespace", "invariants", "volatile", "faults", "schedules", "seed",
  "schedule", "horizon", "maxFirings", "settleTimeout", "shrink", "once", "config", "memo",
];

/** the fields each kind of fault names, beside `kind` (as a report prints them) */
const FAULT_FIELDS: Record<Fault["kind"], string[]> = {
  crash: ["after|before"], delay: ["plural", "ms"], merge: ["plural", "step"], expire: ["plural", "step"],
  error: ["status", "verb", "plural", "nth"], recreate: ["after"], lease: ["after"], timeout: ["verb", "plural", "nth"],
};

/** the statuses an `error` fault answers with (simulate-fault-kinds.ts) */
const ERROR_STATUSES = [409, 429, 500, 503];

/**
 * what each field of a fault must hold: a fault of the right kind and the wrong shape (`nth: "1"`, a site without its
 * `nth`, `after: "w1"`) would match no request, never strike, and the run would pass; undefined: it fits
 */
const FIELD_CHECKS: Record<string, (value: unknown) => string | undefined> = {
  plural: (value) => nonEmpty(value) ? undefined : "must be a resource's plural",
  verb: (value) => nonEmpty(value) ? undefined : "must be a verb (create, patch, get, list, ...)",
  nth: (value) => wholeFrom(1, value) ? undefined : "must be a whole number of at least 1",
  step: (value) => wholeFrom(1, value) ? undefined : "must be a whole number of at least 1",
  ms: (value) => typeof value === "number" && value > 0 && Number.isFinite(value) ? undefined
    : "must be a positive number",
  status: (value) => ERROR_STATUSES.includes(value as number) ? undefined
    : `must be one of ${ERROR_STATUSES.join(", ")}`,
};

/** throws an Error saying what is wrong with the first option that is */
export function checkOptions(options: Record<string, unknown>): void {
  if (typeof options !== "object" || options === null) throw new Error("simulate: expects an object of options");
  for (const key of Object.keys(options)) {
    if (!OPTIONS.includes(key)) {
      throw new Error(`simulate: no option ${JSON.stringify(key)} (the options: ${OPTIONS.join(", ")})`);
    }
  }
  if (typeof options.scenario !== "function") throw new Error("simulate: { scenario } must be an async function");
  for (const key of ["crds", "volatile", "once"]) {
    const value = options[key];
    // a volatile path may be a list of keys, for a key holding dots (an annotation's)
    const fits = (item: unknown) => typeof item === "string" || (key === "volatile" && isKeyList(item));
    if (value !== undefined && !(Array.isArray(value) && value.every(fits))) {
      const what = key === "volatile" ? "dotted paths or lists of keys" : "strings";
      throw new Error(`simulate({ ${key} }): must be an array of ${what}, not ${JSON.stringify(value)}`);
    }
  }
  for (const key of ["invariants", "config", "faults"]) {
    const value = options[key];
    if (value !== undefined && (typeof value !== "object" || value === null || Array.isArray(value))) {
      throw new Error(`simulate({ ${key} }): must be an object, not ${JSON.stringify(value)}`);
    }
  }
  for (const [name, check] of Object.entries((options.invariants ?? {}) as Record<string, unknown>)) {
    if (typeof check !== "function") throw new Error(`simulate({ invariants }): "${name}" must be a function`);
  }
  const memo = options.memo;
  if (memo !== undefined && typeof memo !== "function" && (typeof memo !== "object" || memo === null)) {
    throw new Error(`simulate({ memo }): must be an object or a function making one, not ${JSON.stringify(memo)}`);
  }
  const registry = options.registry as { handlers?: unknown; reconciles?: unknown } | undefined;
  if (registry !== undefined && (typeof registry !== "object" || registry === null || !Array.isArray(registry.handlers)
    || typeof registry.reconciles !== "object")) {
    // else a TypeError from deep inside ("registry.handlers.filter") is all a test that passed `on` or a module sees
    throw new Error("simulate({ registry }): must be a Registry (new Registry(), its handlers declared with " +
      "registry.on.*), or left out for the global one");
  }
  if (options.namespace !== undefined && (typeof options.namespace !== "string" || options.namespace === "")) {
    throw new Error(`simulate({ namespace }): must be a namespace's name, not ${JSON.stringify(options.namespace)}`);
  }
  if (options.shrink !== undefined && typeof options.shrink !== "boolean") {
    throw new Error(`simulate({ shrink }): must be true or false, not ${JSON.stringify(options.shrink)}`);
  }
  checkNumbers(options);
  if (options.schedule !== undefined) checkSchedule(options.schedule);
}

function checkNumbers(options: Record<string, unknown>): void {
  const { schedules, seed } = options;
  for (const name of ["horizon", "maxFirings", "settleTimeout"]) {
    const value = options[name];
    if (value !== undefined && !(typeof value === "number" && value > 0 && Number.isFinite(value))) {
      // quoted when a string: `horizon: "60"` is refused "not \"60\"", not the puzzling "not 60"
      const given = JSON.stringify(value) ?? String(value);
      throw new Error(`simulate({ ${name} }): must be a positive number, not ${given}`);
    }
  }
  if (schedules !== undefined && !(Number.isSafeInteger(schedules) && (schedules as number) >= 1)) {
    throw new Error(`simulate({ schedules }): must be a whole number of at least 1, not ${JSON.stringify(schedules)}`);
  }
  // a report names a schedule "<master>/<index>", which `seed` must take back: a whole master seed
  if (typeof seed === "number" && !(Number.isSafeInteger(seed) && seed >= 0)) {
    throw new Error(`simulate({ seed }): a master seed is a whole number of at least 0, not ${seed}`);
  }
  if (seed !== undefined && typeof seed !== "number" && typeof seed !== "string") {
    throw new Error(`simulate({ seed }): a number, or "<master seed>/<schedule index>", not ${JSON.stringify(seed)}`);
  }
  // refused before the reference run, not after it (scheduleOf reads the same shape)
  if (typeof seed === "string" && !SCHEDULE_SEED.test(seed)) {
    throw new Error(`simulate({ seed }): ${JSON.stringify(seed)} is not "<master seed>/<schedule index>"`);
  }
}

function checkSchedule(schedule: unknown): void {
  if (!Array.isArray(schedule)) {
    const given = JSON.stringify(schedule);
    throw new Error(`simulate({ schedule }): must be an array of faults (as a report prints them), not ${given}`);
  }
  schedule.forEach((fault: unknown, i) => {
    const kind = (fault as { kind?: unknown } | null)?.kind;
    const fields = FAULT_FIELDS[kind as Fault["kind"]];
    if (!fields) {
      throw new Error(`simulate({ schedule }): fault ${i + 1} has no kind ${JSON.stringify(kind)} ` +
        `(the kinds: ${Object.keys(FAULT_FIELDS).join(", ")})`);
    }
    const absent = (field: string) => (fault as Record<string, unknown>)[field] === undefined;
    const missing = fields.filter((field) => field.split("|").every(absent));
    if (missing.length > 0) {
      const what = `fault ${i + 1} (${kind}) lacks ${missing.join(", ")}`;
      throw new Error(`simulate({ schedule }): ${what}: ${JSON.stringify(fault)}`);
    }
    const wrong = faultShapeError(fault as Record<string, unknown>, fields);
    if (wrong) throw new Error(`simulate({ schedule }): fault ${i + 1} (${kind}): ${wrong}`);
  });
}

/** what is wrong with the fields of a fault that has them all, if anything */
function faultShapeError(fault: Record<string, unknown>, fields: string[]): string | undefined {
  for (const field of fields.flatMap((field) => field.split("|")).filter((field) => fault[field] !== undefined)) {
    const value = fault[field];
    if (field === "after" || field === "before") {
      const wrong = siteShapeError(field, value);
      if (wrong) return wrong;
      continue;
    }
    const why = FIELD_CHECKS[field]?.(value);
    if (why) return `${field} ${why}, not ${JSON.stringify(value)}`;
  }
  return undefined;
}

/** what is wrong with a fault's `after` or `before` (a WriteSite or RequestSite), if anything */
function siteShapeError(field: string, value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    const given = JSON.stringify(value);
    return `${field} must be a request as a report names it ({ verb, plural, name, nth }), not ${given}`;
  }
  const site = value as Record<string, unknown>;
  if (typeof site.name !== "string") return `${field}.name must be a string, not ${JSON.stringify(site.name)}`;
  if (site.subresource !== undefined && typeof site.subresource !== "string") {
    return `${field}.subresource must be a string, not ${JSON.stringify(site.subresource)}`;
  }
  for (const part of ["verb", "plural", "nth"]) {
    const why = part === "nth" || typeof site[part] === "string" ? FIELD_CHECKS[part]!(site[part])
      : "must be a string";
    if (why) return `${field}.${part} ${why}, not ${JSON.stringify(site[part])}`;
  }
  return undefined;
}

function nonEmpty(value: unknown): boolean {
  return typeof value === "string" && value !== "";
}

function wholeFrom(least: number, value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= least;
}

/**
 * `once` names handlers by cause (a sub-handler by its qualified id, `create_fn/b`): a misspelt id, or a reconcile's
 * (which runs again on every trigger, by design), would be a check that never fails
 */
export function checkOnce(once: readonly string[], registry: Registry): void {
  const ids = new Set(registry.handlers.filter((handler) => handler.kind !== "event").map((handler) => handler.id));
  const everyTime = (id: string) => registry.reconciles.specs.some((spec) => spec.id === id)
    ? "an on.reconcile, which runs again on every trigger by design"
    : registry.handlers.some((handler) => handler.kind === "event" && handler.id === id)
      ? "an on.event handler, which runs on every event by design"
      : undefined;
  for (const id of once) {
    const why = everyTime(id);
    if (why) {
      throw new Error(`simulate({ once }): "${id}" is ${why}; ` +
        "once is for handlers by cause (on.create, on.update, on.delete, ...)");
    }
    if (!ids.has(id) && !ids.has(id.split("/")[0]!)) {
      const known = [...ids].map((known) => JSON.stringify(known)).join(", ") || "none";
      throw new Error(`simulate({ once }): no handler has the id "${id}" (the handlers' ids: ${known})`);
    }
  }
}

/**
 * A sub-handler exists only once its parent has registered it, as it runs: a `once` id of one (`create_fn/b`) is
 * checked against the fault-free run's log, so that a misspelt one is refused rather than a check that never fails.
 */
export function checkOnceRan(once: readonly string[], logs: readonly string[], registry: Registry): void {
  const ran = new Set(logs.flatMap((line) => [...line.matchAll(/Handler '([^']+)'/g)].map((match) => match[1]!)));
  // A registered id may hold a slash too (an unnamed handler's default, "create/widgets#1"): not a sub-handler's.
  const registered = new Set(registry.handlers.map((handler) => handler.id));
  for (const id of once.filter((id) => id.includes("/") && !registered.has(id) && !ran.has(id))) {
    const subs = [...ran].filter((known) => known.includes("/")).map((known) => JSON.stringify(known)).join(", ");
    throw new Error(`simulate({ once }): no sub-handler "${id}" ran in the fault-free run, so it could never run ` +
      `twice (the sub-handlers that ran: ${subs || "none"})`);
  }
}

function isKeyList(item: unknown): boolean {
  return Array.isArray(item) && item.length > 0 && item.every((key) => typeof key === "string");
}
