// One test operator: a fresh sandbox API server on 127.0.0.1, the CRDs of the handlers'
// resources installed into it, and the operator running in this process with the handlers the
// test imported (the registry `on.*` fills). Objects are applied, read and awaited through it;
// `stop()` (or `await using`) ends the operator, then the sandbox, leaving nothing behind.
// start.ts starts it.

import type { MergePatch, StatusOf, TargetObject } from "../declaring/index.ts";
import { isNotFound } from "../kube/index.ts";
import type { Event, KubeClient, KubeObject, Resource } from "../kube/index.ts";
import type { Sandbox } from "@kobun/sandbox";
import type { Logger, MemorySink, VirtualClock } from "../util/index.ts";
import { advanceClock } from "./advance.ts";
import { holdObject } from "./consistently.ts";
import { eventsAbout, type EventsOptions } from "./events.ts";
import { boundMs } from "./options.ts";
import type { Applied, ApplyOptions, ConsistentlyOptions, Named, WaitOptions } from "./operator-options.ts";
import { awaitObject, KitStopped, type Watched } from "./until.ts";

export type { Applied, ApplyOptions, ConsistentlyOptions, Named, WaitOptions } from "./operator-options.ts";

/** What a TestOperator runs on, made by startOperator(). */
export interface TestOperatorParts {
  sandbox: Sandbox;
  /** A client of the sandbox, as admin (not the operator's own). */
  client: KubeClient;
  namespace: string;
  operatorStop: AbortController;
  /** Aborted when the operator ends by itself (its error is the reason): every wait ends with it. */
  failed: AbortSignal;
  running: Promise<unknown>;
  logger: Logger;
  logs: MemorySink;
  timeoutMs: number;
  /** Under `clock: "virtual"`: the clock of handler time, installed for this operator. */
  clock?: VirtualClock;
  /** Puts back the clock that was installed before (called once the operator has ended). */
  restoreClock: () => void;
}

export class TestOperator {
  readonly sandbox: Sandbox;
  /** A client of the sandbox, as admin (not the operator's own). */
  readonly client: KubeClient;
  readonly namespace: string;
  /**
   * The operator's log lines so far (`logs.lines`), and awaitable: `await kit.logs.until(/handler succeeded/)`.
   * Kept from `startOperator({ logCapture })`'s level (default "info"), whatever reaches stderr.
   */
  readonly logs: MemorySink;
  private readonly resources = new Map<string, Resource>();
  private stopping: Promise<void> | undefined;
  /** Aborted (KitStopped) as stop() begins: a wait in flight then ends at once, not at its timeout. */
  private readonly ended = new AbortController();
  /** What ends every wait: the operator's failure, or the kit's stop. */
  private readonly waits: AbortSignal;

  constructor(private readonly parts: TestOperatorParts) {
    ({ sandbox: this.sandbox, client: this.client, namespace: this.namespace } = parts);
    this.waits = AbortSignal.any([parts.failed, this.ended.signal]);
    // The sink itself (its lines, its write), its waits bounded as the kit's others are; after the
    // stop, a line written already (a cleanup's) is still found.
    const until: MemorySink["until"] = async (pattern, o = {}) => {
      const timeout = boundMs("logs.until", o.timeout ?? parts.timeoutMs);
      return parts.logs.until(pattern, { signal: this.waits, ...o, timeout }).catch((error: unknown) => {
        throw error instanceof KitStopped ? new Error(`logs.until(${String(pattern)}): ${error.message}`) : error;
      });
    };
    this.logs = { ...parts.logs, until };
  }

  /** The sandbox's kubeconfig (for kubectl, or a second client): an explicit file, never yours. */
  get kubeconfigPath(): string {
    return this.sandbox.kubeconfigPath;
  }

  /**
   * Creates the object, or updates it: server-side apply as field manager "kobun-testing".
   * `{ subresource: "status" }` applies its status through the status subresource, as a controller
   * (or kubebuilder's `Status().Update()`) writes it.
   */
  async apply<S extends Named>(
    token: S, object: Applied<TargetObject<S>>, o: ApplyOptions = {},
  ): Promise<TargetObject<S>> {
    this.live("apply");
    const resource = await this.resolve(token);
    const given = object as unknown as KubeObject;
    const name = given.metadata?.name;
    if (!name) throw new Error(`apply ${resource.plural}: the object needs metadata.name`);
    if (o.subresource === "status") this.needStatus(resource, "apply(..., { subresource: \"status\" })");
    const namespace = this.namespaceOf(resource, o.namespace ?? given.metadata.namespace);
    const apiVersion = resource.group ? `${resource.group}/${resource.version}` : resource.version;
    const metadata = { ...given.metadata, ...(namespace ? { namespace } : {}) };
    const body = { ...given, apiVersion, kind: resource.kind, metadata } as KubeObject;
    const manager = { fieldManager: "kobun-testing", force: true, subresource: o.subresource };
    return (await this.client.apply(resource, namespace, name, body, manager)) as TargetObject<S>;
  }

  /**
   * Merges `patch` into the object's status through the status subresource (a merge patch: null
   * removes a field). Resolves with the object as the server answered.
   */
  async patchStatus<S extends Named>(
    token: S, name: string, patch: MergePatch<StatusOf<TargetObject<S>>>, o: { namespace?: string } = {},
  ): Promise<TargetObject<S>> {
    this.live("patchStatus");
    const resource = await this.resolve(token);
    this.needStatus(resource, "patchStatus");
    const namespace = this.namespaceOf(resource, o.namespace);
    const options = { subresource: "status" as const, fieldManager: "kobun-testing" };
    return (await this.client.patch(resource, namespace, name, { status: patch }, options)) as TargetObject<S>;
  }

  /** The object now, or undefined when there is none. */
  async get<S extends Named>(
    token: S, name: string, o: { namespace?: string } = {},
  ): Promise<TargetObject<S> | undefined> {
    this.live("get");
    const resource = await this.resolve(token);
    try {
      return (await this.client.get(resource, this.namespaceOf(resource, o.namespace), name)) as TargetObject<S>;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /**
   * The objects there are now: in the kit's namespace, or `namespace` (`null`: every namespace), those a label
   * selector matches (`"app=shop,tier!=gold"`) when given. Generated names are found this way.
   */
  async list<S extends Named>(
    token: S, o: { namespace?: string | null; labelSelector?: string } = {},
  ): Promise<TargetObject<S>[]> {
    this.live("list");
    const resource = await this.resolve(token);
    const namespace = o.namespace === null ? null : this.namespaceOf(resource, o.namespace);
    const list = await this.client.listAll(resource, { namespace, labelSelector: o.labelSelector });
    return list.items as TargetObject<S>[];
  }

  /** Asks for the deletion (finalizers may keep the object a while: `await gone(...)` for the end). */
  async delete(token: Named, name: string, o: { namespace?: string } = {}): Promise<void> {
    this.live("delete");
    const resource = await this.resolve(token);
    await this.client.delete(resource, this.namespaceOf(resource, o.namespace), name);
  }

  /**
   * Waits, on a watch of the object, until `condition(object)` is true-ish; resolves with that
   * state of the object. Fails after the timeout with a message naming the object, the
   * condition and the last state seen; at once if the operator ends meanwhile.
   */
  async until<S extends Named>(
    token: S, name: string, condition: (object: TargetObject<S>) => unknown, o: WaitOptions = {},
  ): Promise<TargetObject<S>> {
    const test = (object: KubeObject | undefined) => object !== undefined && condition(object as TargetObject<S>);
    const watched = await this.watched(token, name, String(condition), o.namespace);
    this.live("until");
    const timeoutMs = boundMs("until", o.timeout ?? this.parts.timeoutMs);
    const found = await awaitObject({ ...watched, test, timeoutMs });
    return found as TargetObject<S>;
  }

  /** Waits until the object is gone (deleted and its finalizers released). */
  async gone(token: Named, name: string, o: WaitOptions = {}): Promise<void> {
    this.live("gone");
    const timeoutMs = boundMs("gone", o.timeout ?? this.parts.timeoutMs);
    const watched = await this.watched(token, name, "to be gone", o.namespace);
    await awaitObject({ ...watched, test: (object) => object === undefined, timeoutMs });
  }

  /**
   * Proves that `condition` holds for `o.for` ms of real time: every state of the object a watch
   * delivers in that window (the first included; undefined while the object is absent) is tested,
   * and the first false fails at once with a ConsistentlyError naming the state. Resolves with the
   * last state seen.
   */
  async consistently<S extends Named>(
    token: S, name: string, condition: (object: TargetObject<S> | undefined) => unknown, o: ConsistentlyOptions,
  ): Promise<TargetObject<S> | undefined> {
    this.live("consistently");
    if (!(o?.for > 0)) throw new Error(`consistently: { for } must be a positive number of ms, not ${o?.for}`);
    const watched = await this.watched(token, name, String(condition), o.namespace);
    const test = (object: KubeObject | undefined) => condition(object as TargetObject<S> | undefined);
    return (await holdObject({ ...watched, test, forMs: o.for, timeoutMs: this.parts.timeoutMs })) as
      TargetObject<S> | undefined;
  }

  /**
   * The Events posted about `object` (by its uid, or its name and kind), oldest first; an object with a uid and
   * no namespace has them looked for in every namespace. The operator posts them in the background:
   * `{ until: (events) => … }` waits on a watch until they pass.
   */
  async events(object: Pick<KubeObject, "kind" | "metadata">, o: EventsOptions = {}): Promise<Event[]> {
    this.live("events");
    const timeoutMs = boundMs("events", o.timeout ?? this.parts.timeoutMs);
    return eventsAbout({
      client: this.client, events: await this.resolve("v1/events"), object, until: o.until,
      // a uid is unique in the cluster: without a namespace it is found in any (a cluster-scoped object's Events are
      // in "default", a namespaced one's given without its namespace in that namespace); a name is the kit's
      namespace: o.namespace ?? object.metadata?.namespace ?? (object.metadata?.uid ? null : this.namespace),
      timeoutMs, signal: this.waits, logger: this.parts.logger,
    });
  }

  /**
   * Stops the operator (its handlers get their grace period), then the sandbox. Idempotent.
   * Rejects with the operator's error if it had failed on its own before.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.ended.abort(new KitStopped());
      this.parts.operatorStop.abort(new DOMException("the test operator stops", "AbortError"));
      try {
        await this.parts.running;
        // An operator that failed on its own fails the test here too, even if no wait saw it.
        if (this.parts.failed.aborted) throw this.parts.failed.reason;
      } finally {
        this.parts.restoreClock();
        this.client.close();
        await this.sandbox.stop();
      }
    })();
    return this.stopping;
  }

  /** Handler time now: the virtual clock's under `startOperator({ clock: "virtual" })`, else the machine's. */
  now(): Date {
    return new Date(this.parts.clock?.now() ?? Date.now());
  }

  /**
   * Moves the virtual clock `seconds` forward, firing every timer, requeue, retry and daemon sleep
   * due in that window in order, each once the work of the one before is over. Resolves when time
   * has reached the end of the window and the operator is quiet.
   */
  async advance(seconds: number): Promise<void> {
    if (!this.parts.clock) {
      throw new Error(
        "advance(): this operator runs on the machine's clock; start it with startOperator({ clock: \"virtual\" })",
      );
    }
    this.live("advance");
    const bounds = { timeoutMs: this.parts.timeoutMs, failed: this.waits };
    await advanceClock(this.parts.clock, seconds, bounds).catch((error: unknown) => {
      throw error instanceof KitStopped ? new Error(`advance(${seconds}): ${error.message}`) : error;
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  private async watched(token: Named, name: string, what: string, namespace: string | undefined): Promise<Watched> {
    const resource = await this.resolve(token);
    return {
      client: this.client, resource, name, what, namespace: this.namespaceOf(resource, namespace),
      signal: this.waits, logger: this.parts.logger,
    };
  }

  /** Refuses a call on a stopped kit at once (its sandbox refuses connections: a wait would run to its timeout). */
  private live(verb: string): void {
    if (this.ended.signal.aborted) throw new Error(`${verb}: ${new KitStopped().message}`);
  }

  private needStatus(resource: Resource, what: string): void {
    if (resource.statusSubresource) return;
    throw new Error(
      `${what}: ${resource.plural} has no status subresource; apply the object with its status instead ` +
        "(its CRD can declare `subresources: { status: {} }`)",
    );
  }

  private namespaceOf(resource: Resource, named: string | undefined): string | null {
    return resource.namespaced ? (named ?? this.namespace) : null;
  }

  private async resolve(token: Named): Promise<Resource> {
    const key = typeof token === "string" ? token : `${token.plural}.${token.group ?? ""}/${token.version ?? ""}`;
    let resource = this.resources.get(key);
    if (!resource) this.resources.set(key, (resource = await this.client.resolve(token)));
    return resource;
  }
}
