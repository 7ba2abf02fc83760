// One cluster-wide watch of a namespaced peering resource, fanned out to the Peering of each
// served namespace: with hundreds of namespaces, one stream instead of one per namespace (the
// process has only so many connection slots). Each subscriber sees what its own watch would
// have shown: a relist (start, its namespace's object, done) when it joins and after every
// relist of the shared watch, then that namespace's changes. A failure of the shared watch is
// thrown to every subscriber (their own retry policy applies), and the feed re-watches.

import type { KubeObject, Resource } from "../kube/index.ts";
import { Backoff } from "../util/index.ts";
import { supervise } from "../util/index.ts";
import type { Logger } from "../util/index.ts";
import type { WatchClient, WatchEvent } from "../watching/index.ts";
import { Watcher } from "../watching/index.ts";

/** Where a Peering reads its peering object's events from. */
export type PeeringEvents = (signal: AbortSignal) => AsyncIterable<WatchEvent>;

interface Subscriber {
  push(event: WatchEvent | Error): void;
}

export class PeeringFeed {
  /** The peering objects named `name`, by namespace, as of the last complete relist. */
  private readonly known = new Map<string, KubeObject>();
  private listing: Map<string, KubeObject> | undefined;
  private resourceVersion: string | undefined;
  private readonly subscribers = new Map<string, Set<Subscriber>>();

  constructor(
    private readonly client: WatchClient,
    private readonly resource: Resource,
    private readonly name: string,
    private readonly logger: Logger,
    /** The longest watch line accepted, in bytes (watching.lineLimit); default the Watcher's. */
    private readonly maxLineBytes?: number,
  ) {}

  /** Runs the shared watch until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const limits = this.maxLineBytes !== undefined ? { maxLineBytes: this.maxLineBytes } : {};
    const watcher = new Watcher(this.client, this.resource, { namespace: null, logger: this.logger, ...limits });
    await supervise(
      {
        open: (s) => watcher.events(s),
        each: (event) => this.route(event),
        delays: new Backoff({ initial: 500, max: 30_000, resetAfter: 60_000 }),
        failed: (error) => {
          this.resourceVersion = undefined;
          this.listing = undefined;
          // Each subscriber (a namespace's peering) reports and retries on its own.
          const failure = error instanceof Error ? error : new Error(String(error));
          for (const group of this.subscribers.values()) for (const s of group) s.push(failure);
        },
      },
      signal,
    );
  }

  /** The events of `namespace`'s peering object, until `signal` aborts or the shared watch fails. */
  events(namespace: string): PeeringEvents {
    return (signal) => this.subscribe(namespace, signal);
  }

  private async *subscribe(namespace: string, signal: AbortSignal): AsyncGenerator<WatchEvent> {
    const queue: (WatchEvent | Error)[] = [];
    let wake: (() => void) | undefined;
    const subscriber: Subscriber = {
      push(event) {
        queue.push(event);
        wake?.();
      },
    };
    const onAbort = () => wake?.();
    signal.addEventListener("abort", onAbort, { once: true });
    let group = this.subscribers.get(namespace);
    if (!group) this.subscribers.set(namespace, (group = new Set()));
    group.add(subscriber);
    if (this.resourceVersion !== undefined) this.snapshot(namespace, subscriber, this.resourceVersion);
    try {
      while (!signal.aborted) {
        const next = queue.shift();
        if (next === undefined) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        if (next instanceof Error) throw next;
        yield next;
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
      group.delete(subscriber);
      if (group.size === 0 && this.subscribers.get(namespace) === group) this.subscribers.delete(namespace);
    }
  }

  private snapshot(namespace: string, subscriber: Subscriber, resourceVersion: string): void {
    subscriber.push({ type: "relist-start" });
    const object = this.known.get(namespace);
    if (object) subscriber.push({ type: "listed", object });
    subscriber.push({ type: "relist-done", resourceVersion });
  }

  private route(event: WatchEvent): void {
    switch (event.type) {
      case "relist-start":
        this.listing = new Map();
        return;
      case "listed": {
        const { name, namespace } = event.object.metadata;
        if (name === this.name && namespace) this.listing?.set(namespace, event.object);
        return;
      }
      case "relist-done":
        this.known.clear();
        for (const [namespace, object] of this.listing ?? []) this.known.set(namespace, object);
        this.listing = undefined;
        this.resourceVersion = event.resourceVersion;
        for (const [namespace, group] of this.subscribers) {
          for (const s of group) this.snapshot(namespace, s, event.resourceVersion);
        }
        return;
      default: {
        const { name, namespace } = event.object.metadata;
        if (name !== this.name || !namespace) return;
        if (event.type === "deleted") this.known.delete(namespace);
        else this.known.set(namespace, event.object);
        for (const s of this.subscribers.get(namespace) ?? []) s.push(event);
      }
    }
  }
}
