// One test operator: a fresh sandbox API server on 127.0.0.1, the CRDs of the handlers'
// resources installed into it, and the operator running in this process with the handlers the
// test imported (the registry `on.*` fills). Objects are applied, read and awaited through it;
// `stop()` (or `await using`) ends the operator, then the sandbox, leaving nothing behind.

import { readFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import { resolveSettings, type FlagValues } from "../config/index.ts";
import type { Registry } from "../declaring/index.ts";
import { registry as defaultRegistry } from "../declaring/index.ts";
import type { ObjectOf, ResourceToken } from "../declaring/index.ts";
import { isNotFound } from "../kube/index.ts";
import type { KubeObject, ObjectMeta, Resource } from "../kube/index.ts";
import { KubeClient } from "../kube/index.ts";
import { applyManifests, startSandbox } from "../runtime/dev.ts";
import { run, withDefinitions, type Manifest } from "../runtime/index.ts";
import type { Sandbox } from "@kobun/sandbox";
import { Logger, stderrSink, silentLogger, type LogLevel } from "../util/index.ts";
import { awaitObject } from "./until.ts";

/** A resource as the kit names it: a typed token, or a selector string ("configmaps", "kobunexamples.kobun.dev/v1"). */
export type Named = ResourceToken<any> | string;

/** What `apply` takes: the object without the parts kobun fills (apiVersion, kind), with a name. */
export type Applied<T> = Omit<T, "apiVersion" | "kind" | "metadata">
  & { apiVersion?: string; kind?: string; metadata: ObjectMeta & { name: string } };

export interface TestOperatorOptions {
  /** The namespace the operator watches and objects go to by default (default "default"; created if missing). */
  namespace?: string;
  /** CRD files (YAML) to install besides those of defineResource's resources, e.g. handlers/my.crd.yaml. */
  crds?: string[];
  /** More `kobun run` flags, as parsed (e.g. { config: "kobun.yaml" }); namespaces and standalone are the kit's. */
  flags?: Partial<FlagValues>;
  /** The handlers to run (default: the registry that `on.*` fills). */
  registry?: Registry;
  /** The default bound of `until` and `gone`, in ms (default 5000). */
  timeout?: number;
  /** The operator's log on stderr from this level (default "warn"); "silent" for none. */
  logLevel?: LogLevel | "silent";
}

export interface WaitOptions {
  namespace?: string;
  /** In ms; default the kit's timeout. */
  timeout?: number;
}

export class TestOperator {
  private readonly resources = new Map<string, Resource>();
  private stopping: Promise<void> | undefined;

  constructor(
    readonly sandbox: Sandbox,
    /** A client of the sandbox, as admin (not the operator's own). */
    readonly client: KubeClient,
    readonly namespace: string,
    private readonly operatorStop: AbortController,
    /** Aborted when the operator ends by itself (its error is the reason): every wait ends with it. */
    private readonly failed: AbortSignal,
    private readonly running: Promise<unknown>,
    private readonly logger: Logger,
    private readonly timeoutMs: number,
  ) {}

  /** The sandbox's kubeconfig (for kubectl, or a second client): an explicit file, never yours. */
  get kubeconfigPath(): string {
    return this.sandbox.kubeconfigPath;
  }

  /** Creates the object, or updates it: server-side apply as field manager "kobun-testing". */
  async apply<S extends Named>(
    token: S, object: Applied<ObjectOf<S>>, o: { namespace?: string } = {},
  ): Promise<ObjectOf<S>> {
    const resource = await this.resolve(token);
    const name = object.metadata?.name;
    if (!name) throw new Error(`apply ${resource.plural}: the object needs metadata.name`);
    const namespace = this.namespaceOf(resource, o.namespace ?? object.metadata.namespace);
    const apiVersion = resource.group ? `${resource.group}/${resource.version}` : resource.version;
    const metadata = { ...object.metadata, ...(namespace ? { namespace } : {}) };
    const body = { ...object, apiVersion, kind: resource.kind, metadata } as KubeObject;
    const manager = { fieldManager: "kobun-testing", force: true };
    return (await this.client.apply(resource, namespace, name, body, manager)) as ObjectOf<S>;
  }

  /** The object now, or undefined when there is none. */
  async get<S extends Named>(token: S, name: string, o: { namespace?: string } = {}): Promise<ObjectOf<S> | undefined> {
    const resource = await this.resolve(token);
    try {
      return (await this.client.get(resource, this.namespaceOf(resource, o.namespace), name)) as ObjectOf<S>;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Asks for the deletion (finalizers may keep the object a while: `await gone(...)` for the end). */
  async delete(token: Named, name: string, o: { namespace?: string } = {}): Promise<void> {
    const resource = await this.resolve(token);
    await this.client.delete(resource, this.namespaceOf(resource, o.namespace), name);
  }

  /**
   * Waits, on a watch of the object, until `condition(object)` is true-ish; resolves with that
   * state of the object. Fails after the timeout with a message naming the object, the
   * condition and the last state seen; at once if the operator ends meanwhile.
   */
  async until<S extends Named>(
    token: S, name: string, condition: (object: ObjectOf<S>) => unknown, o: WaitOptions = {},
  ): Promise<ObjectOf<S>> {
    const test = (object: KubeObject | undefined) => object !== undefined && condition(object as ObjectOf<S>);
    const found = await this.wait(token, name, test, String(condition), o);
    return found as ObjectOf<S>;
  }

  /** Waits until the object is gone (deleted and its finalizers released). */
  async gone(token: Named, name: string, o: WaitOptions = {}): Promise<void> {
    await this.wait(token, name, (object) => object === undefined, "to be gone", o);
  }

  /**
   * Stops the operator (its handlers get their grace period), then the sandbox. Idempotent.
   * Rejects with the operator's error if it had failed on its own before.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.operatorStop.abort(new DOMException("the test operator stops", "AbortError"));
      try {
        await this.running;
        // An operator that failed on its own fails the test here too, even if no wait saw it.
        if (this.failed.aborted) throw this.failed.reason;
      } finally {
        this.client.close();
        await this.sandbox.stop();
      }
    })();
    return this.stopping;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  private async wait(
    token: Named, name: string, test: (o: KubeObject | undefined) => unknown, what: string, o: WaitOptions,
  ): Promise<KubeObject | undefined> {
    const resource = await this.resolve(token);
    return awaitObject({
      client: this.client, resource, name, test, what,
      namespace: this.namespaceOf(resource, o.namespace),
      timeoutMs: o.timeout ?? this.timeoutMs,
      signal: this.failed,
      logger: this.logger,
    });
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

/** A file of `crds`, or an error naming the option and where a relative path was looked for. */
function readCrd(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== "ENOENT") throw error;
    throw new Error(
      `startOperator({ crds }): no file ${JSON.stringify(path)} ` +
        `(looked for ${resolve(path)}, relative to the working directory ${process.cwd()}); ` +
        "give the path of a CRD file of your project, " +
        "or define the resource with defineResource, whose CRD is installed without a file",
      { cause: error },
    );
  }
}

/**
 * Starts a sandbox and the operator in this process, with the handlers the test file imported
 * and the CRDs of their defined resources (and of `crds`) installed. Resolves once the
 * operator is ready: every watch has listed and the listed objects were handled once, so an object
 * the test creates next arrives as created (not listed). Stop it with `stop()`, or `await using`.
 */
export async function startOperator(options: TestOperatorOptions = {}): Promise<TestOperator> {
  const namespace = options.namespace ?? "default";
  const logger = options.logLevel === "silent" ? silentLogger : new Logger(stderrSink(options.logLevel ?? "warn"));
  const sandbox = await startSandbox();
  let client: KubeClient | undefined;
  try {
    client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
    const manifests: Manifest[] = (options.crds ?? []).map((path) => ({ name: basename(path), text: readCrd(path) }));
    const registry = options.registry ?? defaultRegistry;
    await applyManifests(client, withDefinitions(manifests, registry), logger, AbortSignal.timeout(30_000));
    await ensureNamespace(client, namespace);
    const settings = resolveSettings({
      flags: { ...options.flags, kubeconfig: sandbox.kubeconfigPath, namespaces: [namespace], standalone: true },
    });
    const stop = new AbortController();
    const failure = new AbortController();
    let started!: () => void;
    const ready = new Promise<void>((resolve) => (started = resolve));
    const running = run({ signal: stop.signal, settings, registry, logger, onReady: () => started() }).then(
      () => { if (!stop.signal.aborted) failure.abort(new Error("the test operator ended before stop()")); },
      (error) => {
        if (!(error instanceof Error)) return failure.abort(error);
        failure.abort(new Error(`the test operator failed: ${error.message}`, { cause: error }));
      },
    );
    const endedFirst = running.then(() => {
      throw failure.signal.reason ?? new Error("the test operator ended before it started");
    });
    endedFirst.catch(() => {}); // read by the race only: once started, the operator's end is stop()'s business
    await Promise.race([ready, endedFirst]);
    return new TestOperator(sandbox, client, namespace, stop, failure.signal, running, logger, options.timeout ?? 5000);
  } catch (error) {
    client?.close();
    await sandbox.stop();
    throw error;
  }
}

async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  const namespaces = await client.resolve("v1/namespaces");
  try {
    await client.get(namespaces, null, name);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await client.create(namespaces, null, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  }
}
