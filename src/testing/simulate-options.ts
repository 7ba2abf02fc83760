// simulate()'s options, checked before anything runs. A test that misspells an option, or gives
// one the wrong shape, is refused with what was expected: ignored, it would run something other
// than what the test meant and could pass (`schedule: 200` for `schedules`, a fault copied from a
// report and then mistyped, a master seed whose reported replay seed would itself be refused).

import type { Registry } from "../declaring/index.ts";
import type { Fault } from "./simulate-fault-kinds.ts";

const OPTIONS = [
  "scenario", "registry", "crds", "namespace", "invariants", "volatile", "faults", "schedules", "seed",
  "schedule", "horizon", "maxFirings", "settleTimeout", "shrink", "once", "config", "memo",
];

/** the fields each kind of fault names, beside `kind` (as a report prints them) */
const FAULT_FIELDS: Record<Fault["kind"], string[]> = {
  crash: ["after|before"], delay: ["plural", "ms"], merge: ["plural", "step"], expire: ["plural", "step"],
  error: ["status", "verb", "plural", "nth"], recreate: ["after"], lease: ["after"], timeout: ["verb", "plural", "nth"],
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
  });
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
