// The world a simulation's scenario acts on: the kit's own apply, patchStatus and delete, and
// advance (virtual time moved on), each one step. After each step the world settles (the
// operator goes quiet, the timers due soon fired) and the declared invariants are checked; a
// merge fault starts holding events before its step and lets the merged states through once the
// operator has settled on the next one. An apply of an object the scenario deleted waits for it to go.

import type { MergePatch, StatusOf, TargetObject } from "../declaring/index.ts";
import type { ApplyOptions, Applied, Named, TestOperator } from "./operator.ts";

/** what a scenario gets: the cluster as the test (and the controllers it plays) changes it */
export interface World {
  /** server-side apply of the object (as kit.apply): one step; one this world deleted, still there, goes first */
  apply<S extends Named>(token: S, object: Applied<TargetObject<S>>, o?: ApplyOptions): Promise<TargetObject<S>>;
  /** server-side apply of each object in turn, as `kubectl apply -f` of a file of many: one step */
  applyAll<S extends Named>(
    token: S, objects: Applied<TargetObject<S>>[], o?: ApplyOptions,
  ): Promise<TargetObject<S>[]>;
  /** a merge patch of the object's status, as its controller would write it (as kit.patchStatus): one step */
  patchStatus<S extends Named>(
    token: S, name: string, patch: MergePatch<StatusOf<TargetObject<S>>>, o?: { namespace?: string },
  ): Promise<TargetObject<S>>;
  /**
   * moves the run's virtual clock `seconds` on, firing every timer due in the window (a requeueAfter, a
   * handler's retry, a timer's interval), the operator settled after each: one step
   */
  advance(seconds: number): Promise<void>;
  /** asks for the deletion (as kit.delete): one step (a later apply of the object waits for it to go) */
  delete(token: Named, name: string, o?: { namespace?: string }): Promise<void>;
  /** the object now (no step) */
  get<S extends Named>(token: S, name: string, o?: { namespace?: string }): Promise<TargetObject<S> | undefined>;
  /** the objects of a resource now, in the world's namespace (or all, for a cluster-scoped one) */
  list<S extends Named>(token: S): Promise<TargetObject<S>[]>;
  /** the steps taken so far */
  readonly step: number;
}

export interface WorldHooks {
  /** before step `step` changes anything (merge faults start) */
  before(step: number, what: string): Promise<void> | void;
  /** after it: settle, merges released, invariants checked */
  after(step: number): Promise<void>;
  /** the change of an advance step: time moved, the operator settled after each firing */
  advance(step: number, seconds: number): Promise<void>;
  /** before step `next`, an apply of `what` (objects the scenario deleted, still there): their deletion finished */
  untilGone(next: number, what: string): Promise<void>;
}

export function makeWorld(kit: TestOperator, hooks: WorldHooks): World {
  let step = 0;
  /** the objects the scenario asked to delete ("plural namespace/name") */
  const deleted = new Set<string>();
  // the kit's namespace where none is named, at the delete as at the apply (a cluster-scoped object's is ignored)
  const keyOf = (token: Named, name: string, namespace: string | undefined) =>
    `${nameOf(token)} ${namespace ?? kit.namespace}/${name}`;
  /**
   * An apply of an object the scenario deleted, still there (its finalizer not released yet: a merge holds the
   * deletion back from the operator), is its re-creation: `kubectl delete` waits for the object to go before the
   * next command runs, and so does the step, or it would patch the object being deleted, which then goes
   */
  const goneFirst = async (token: Named, objects: unknown[], o: ApplyOptions = {}) => {
    if (o.subresource === "status") return;
    const deleting: string[] = [];
    for (const object of objects) {
      const name = nameIn(object);
      const namespace = o.namespace ?? namespaceIn(object);
      if (!name || !deleted.has(keyOf(token, name, namespace))) continue;
      const found = await kit.get(token, name, namespace ? { namespace } : {});
      if (found?.metadata?.deletionTimestamp) deleting.push(name);
    }
    if (deleting.length > 0) await hooks.untilGone(step + 1, `${nameOf(token)} ${deleting.join(", ")}`);
  };
  const stepped = async <T>(what: string, change: () => Promise<T>): Promise<T> => {
    const n = ++step;
    await hooks.before(n, what);
    const result = await change();
    await hooks.after(n);
    return result;
  };
  return {
    get step() { return step; },
    apply: async (token, object, o) => {
      await goneFirst(token, [object], o);
      return stepped(`apply ${nameOf(token)} ${nameIn(object)}`.trim() + applied(object, isSecret(token, object)),
        () => kit.apply(token, object, o));
    },
    applyAll: async (token, objects, o) => {
      await goneFirst(token, objects, o);
      return stepped(`apply ${nameOf(token)} ${objects.map((object) => nameIn(object)).join(", ")}`, async () => {
        const applied: TargetObject<typeof token>[] = [];
        for (const object of objects) applied.push(await kit.apply(token, object, o));
        return applied;
      });
    },
    patchStatus: (token, name, patch, o) =>
      stepped(`patch the status of ${nameOf(token)} ${name}: ${JSON.stringify(patch)}`,
        () => kit.patchStatus(token, name, patch, o)),
    advance: (seconds) => stepped(`advance the clock ${seconds} s`, () => hooks.advance(step, seconds)),
    delete: (token, name, o) => {
      deleted.add(keyOf(token, name, o?.namespace));
      return stepped(`delete ${nameOf(token)} ${name}`, () => kit.delete(token, name, o));
    },
    get: (token, name, o) => kit.get(token, name, o),
    list: (token) => kit.list(token),
  };
}

/**
 * what an apply writes besides the object's name, for the story: a scenario applying one object again and again
 * (replicas 0, 1, 0) is told by its values, as a status patch is
 */
function applied(object: unknown, secret: boolean): string {
  const { apiVersion: _v, kind: _k, metadata, ...rest } = object as Record<string, unknown> & {
    metadata?: Record<string, unknown>;
  };
  const { name: _n, namespace: _ns, ...meta } = metadata ?? {};
  // A Secret's values never reach a report (CI logs keep them): their keys are told, not what they hold.
  if (secret) {
    for (const key of ["data", "stringData"]) {
      const values = rest[key];
      const count = values && typeof values === "object" ? Object.keys(values).length : undefined;
      if (count !== undefined) rest[key] = `<${count} ${count === 1 ? "key" : "keys"}>`;
    }
  }
  const shown = JSON.stringify(Object.keys(meta).length > 0 ? { metadata: meta, ...rest } : rest);
  if (shown === "{}") return "";
  return `: ${shown.length > STORY_VALUES ? `${shown.slice(0, STORY_VALUES)}…` : shown}`;
}

/** the most characters of an applied object's values a step's line shows */
const STORY_VALUES = 160;

function nameIn(object: unknown): string {
  return (object as { metadata?: { name?: string } }).metadata?.name ?? "";
}

function namespaceIn(object: unknown): string | undefined {
  return (object as { metadata?: { namespace?: string } }).metadata?.namespace;
}

/** Whether an apply writes a Secret: by the object's kind, the token's, or a selector naming core's secrets. */
function isSecret(token: Named, object: unknown): boolean {
  if ((object as { kind?: unknown }).kind === "Secret") return true;
  if (typeof token !== "string") return (token as { kind?: unknown }).kind === "Secret" || token.plural === "secrets";
  return /^(v1\/)?(secrets?|Secret)$/.test(token);
}

function nameOf(token: Named): string {
  return typeof token === "string" ? token : token.plural;
}
