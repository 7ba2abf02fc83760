// Peering: this operator's life in one peering object. Three activities, one decision:
//   - keep-alive: write our record every `lifetime` minus a little jitter;
//   - watch: follow the peering object, re-decide on every change of it;
//   - a single timer at the moment the earliest blocking peer expires, so resuming after a
//     ghost (a peer killed without cleanup) happens at its deadline, not a keep-alive later.
// The decision itself is `decide()` (pure); this file only does I/O, and hold.ts applies it
// to the Toggle under the holder `peering:<namespace|cluster>/<name>`. Nothing is logged per
// event while frozen.

import { resourceName, type KubeObject } from "../kube/index.ts";
import { linkedSignal, sleep } from "../util/index.ts";
import { Backoff } from "../util/index.ts";
import { supervise } from "../util/index.ts";
import type { Logger } from "../util/index.ts";
import type { WatchEvent } from "../watching/index.ts";
import { Watcher } from "../watching/index.ts";
import { carriedPeers, countLive, decide, keepaliveInterval, parsePeers, peerRecord } from "./decide.ts";
import { PeeringHold } from "./hold.ts";
import { peerId } from "./identity.ts";
import { createPeering, errorText, findPeering, keepRecordUntil, leavePeering, warnUnpeered } from "./presence.ts";
import {
  describeTarget, isObjectMissing, isResourceMissing, peeringTarget, removeDeadRecord, writeRecord, type PeeringTarget,
} from "./records.ts";
import type { PeeringOptions } from "./options.ts";

export type { PeeringOptions } from "./options.ts";

/** setTimeout's limit (2^31-1 ms, ~24.8 days): longer delays fire at once. A timer capped here re-arms for the rest. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class Peering {
  readonly id: string;
  /** The toggle holder name: `peering:<namespace|cluster>/<name>`. */
  readonly holder: string;
  private readonly target: PeeringTarget;
  private readonly where: string;
  private readonly log: Logger;
  private readonly hold: PeeringHold;
  /** The peering object as last seen by the watch (undefined: absent or not yet seen). */
  private body: KubeObject | undefined;
  private listed: KubeObject | undefined;
  /**
   * The last body of the peering object when it was deleted. Deleting it does not make the
   * peers in it dead: its live records keep their force until their deadlines (Kopf, too,
   * judges by the deleted body), else a lower operator would run beside a live higher one
   * until that one's next keep-alive, even once its own keep-alive re-created the object.
   */
  private gone: KubeObject | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The signal of the current serving period (keep-alive + watch); cleanups use it. */
  private serving: AbortSignal | undefined;
  private readonly cleaning = new Set<string>();
  private readonly background = new Set<Promise<unknown>>();
  /** Our record may be in the object: remove it on exit. */
  private joined = false;
  /** When the keep-alive last wrote our record (epoch ms). */
  private writtenAt = 0;
  /** What keeps the peering from working now, by activity; reported through the observer (/healthz). */
  private readonly failures = new Map<"presence" | "keep-alive" | "watch", string>();

  constructor(private readonly options: PeeringOptions) {
    this.id = options.id ?? peerId();
    this.target = peeringTarget(options.group, options.name, options.namespace);
    this.where = describeTarget(this.target);
    this.holder = `peering:${this.where}`;
    this.log = options.logger.child({ peering: `${resourceName(this.target.resource)}/${this.where}` });
    this.hold = new PeeringHold(options.toggle, this.holder, options.priority, this.log);
  }

  /**
   * Runs until `signal` aborts, then removes our record (bounded by `exitTimeoutMs`) and
   * returns. Freezes the toggle synchronously, before its first await, until the first look at
   * the peers: start it before the watchers and no LIST happens while a higher peer is alive.
   * Returns early (having unfrozen) when peering is not mandatory and not set up in the cluster.
   * On abort it leaves its freeze in place: the operator is stopping, and resuming the
   * watchers now would only start LISTs during shutdown.
   */
  async run(signal: AbortSignal): Promise<void> {
    this.hold.waitForFirstLook();
    try {
      await this.loop(signal);
    } finally {
      this.disarm();
      await Promise.allSettled(this.background);
      if (this.joined) {
        // Our record, kept alive, keeps the peers frozen until our handlers are done with the objects.
        const { client, exitTimeoutMs, lifetime } = this.options;
        const write = (stopped: AbortSignal) => writeRecord(
          client, this.target, this.id, this.record(), AbortSignal.any([stopped, AbortSignal.timeout(lifetime * 1000)]),
        );
        await keepRecordUntil(write, this.writtenAt, keepaliveInterval(lifetime), this.options.beforeLeave?.());
        const left = await leavePeering(client, this.target, this.id, this.log, exitTimeoutMs ?? 2000, lifetime);
        if (left) this.joined = false;
      }
    }
  }

  private async loop(signal: AbortSignal): Promise<void> {
    const { initialMs, maxMs } = this.options.recheck ?? { initialMs: 500, maxMs: 10_000 };
    const backoff = new Backoff({ initial: initialMs, max: maxMs, jitter: 0.2 });
    let complaint: string | undefined;
    while (!signal.aborted) {
      const found = await findPeering(this.options.client, this.target, this.id, this.record(), signal);
      if (signal.aborted) return;
      if (found.kind === "ready") {
        this.joined ||= found.created;
        if (found.created) this.log.info("created the peering object");
        if (complaint) this.log.info("the peering object is available; watching the peers");
        complaint = undefined;
        this.failed("presence", null);
        backoff.reset();
        await this.serve(signal);
        continue;
      }
      if (found.kind === "missing" && !this.options.mandatory) {
        warnUnpeered(this.log, found.why, this.options.notices, this.options.equalsShare);
        this.hold.release();
        return;
      }
      const why = found.kind === "missing" ? found.why : `cannot read the peering object: ${errorText(found.error)}`;
      if (complaint !== why) {
        if (found.kind === "missing") {
          this.log.warn("peering is mandatory but not available: staying frozen until it is", { why });
        } else {
          this.log.warn("staying frozen, retrying", { why });
        }
        complaint = why;
      }
      this.failed("presence", `staying frozen: ${why}`);
      this.hold.unavailable(why, found.kind === "missing");
      await sleep(backoff.next(), signal);
    }
  }

  /** Keep-alive and watch until `signal` aborts or the peering resource disappears. */
  private async serve(signal: AbortSignal): Promise<void> {
    const local = linkedSignal(signal);
    const stop = () => local.controller.abort(new DOMException("peering resource gone", "AbortError"));
    this.serving = local.signal;
    try {
      await Promise.all([this.keepalive(local.signal, stop), this.watch(local.signal, stop)]);
    } finally {
      local.dispose();
      this.disarm();
      this.body = undefined;
      this.gone = undefined;
      this.failed("keep-alive", null);
      this.failed("watch", null);
    }
  }

  private async keepalive(signal: AbortSignal, stop: () => void): Promise<void> {
    const backoff = new Backoff({ initial: 500, max: Math.max(1000, (this.options.lifetime * 1000) / 4), jitter: 0.3 });
    let failing = false;
    while (!signal.aborted) {
      try {
        await writeRecord(this.options.client, this.target, this.id, this.record(), signal);
        this.joined = true;
        this.writtenAt = Date.now();
        if (failing) this.log.info("keep-alive written again");
        failing = false;
        this.failed("keep-alive", null);
        backoff.reset();
        await sleep(keepaliveInterval(this.options.lifetime), signal);
      } catch (error) {
        if (signal.aborted) return;
        if (isResourceMissing(error)) return stop();
        if (isObjectMissing(error)) {
          const created = await createPeering(this.options.client, this.target, this.id, this.record(), signal);
          if (created.kind === "ready") continue;
          if (created.kind === "missing" && created.notServed) return stop();
        }
        if (!failing) this.log.warn("cannot write the keep-alive record; retrying", { error: errorText(error) });
        failing = true;
        this.failed("keep-alive", `cannot write the keep-alive record: ${errorText(error)}`);
        await sleep(backoff.next(), signal);
      }
    }
  }

  private record() {
    return peerRecord(Date.now(), this.options.priority, this.options.lifetime);
  }

  private async watch(signal: AbortSignal, stop: () => void): Promise<void> {
    const { client, logger, maxLineBytes } = this.options;
    const where = { namespace: this.target.namespace, logger, ...(maxLineBytes !== undefined ? { maxLineBytes } : {}) };
    const own = this.options.events ? undefined : new Watcher(client, this.target.resource, where);
    const events = this.options.events ?? ((s: AbortSignal) => own!.events(s));
    await supervise(
      {
        open: events,
        each: (event) => this.onEvent(event),
        delays: new Backoff({ initial: 500, max: 30_000, resetAfter: 60_000 }),
        recovered: () => {
          this.log.info("watching the peering object again");
          this.failed("watch", null);
        },
        failed: (error, { first }) => {
          if (isResourceMissing(error)) {
            stop();
            return "stop";
          }
          if (first) this.log.warn("watching the peering object failed; retrying", { error: errorText(error) });
          this.failed("watch", `watching the peering object failed: ${errorText(error)}`);
        },
      },
      signal,
    );
  }

  private onEvent(event: WatchEvent): void {
    switch (event.type) {
      case "relist-start":
        this.listed = undefined;
        return;
      case "listed":
        if (event.object.metadata.name === this.target.name) this.listed = event.object;
        return;
      case "relist-done":
        this.body = this.listed;
        this.listed = undefined;
        return this.evaluate();
      case "added":
      case "modified":
        if (event.object.metadata.name !== this.target.name) return;
        this.body = event.object;
        return this.evaluate();
      case "deleted":
        // Deleting the object does not make the peers in it dead (see `gone`).
        if (event.object.metadata.name !== this.target.name) return;
        this.body = undefined;
        this.gone = event.object;
        return this.evaluate();
    }
  }

  /** Records (or, with null, clears) what keeps one activity of the peering from working. */
  private failed(activity: "presence" | "keep-alive" | "watch", why: string | null): void {
    if ((this.failures.get(activity) ?? null) === why) return;
    if (why === null) this.failures.delete(activity);
    else this.failures.set(activity, why);
    this.options.observer?.peeringFailing(this.failures.size ? [...this.failures.values()].join("; ") : null);
  }

  /** Decide on the last seen body now; clean the dead; apply; re-arm the expiry timer. */
  private evaluate(): void {
    const now = Date.now();
    const status = this.body?.status;
    const peers = parsePeers(status, now);
    const carried = this.gone ? carriedPeers(this.gone.status, peers, this.id, now) : [];
    // Forget the deleted object once none of its records is alive.
    if (carried.length === 0) this.gone = undefined;
    const { priority, equalsShare } = this.options;
    const decision = decide(now, this.id, priority, [...peers, ...carried], equalsShare ?? false);
    this.options.observer?.peersSeen(countLive(peers, carried, this.id, now));
    for (const peer of decision.dead) this.clean(peer.id, status?.[peer.id]);
    this.hold.apply(decision);
    this.arm(decision.nextChangeAt);
  }

  private arm(at: number | undefined): void {
    this.disarm();
    if (at === undefined) return;
    // +1 ms: a peer is dead from its deadline on, and a timer may fire a fraction early.
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.evaluate();
    }, Math.min(MAX_TIMER_MS, Math.max(0, at - Date.now()) + 1));
  }

  private disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Removes a dead peer's record in the background (once at a time per peer). */
  private clean(id: string, record: unknown): void {
    const signal = this.serving;
    if (!signal || signal.aborted || this.cleaning.has(id)) return;
    const lastseen = (record as { lastseen?: unknown } | undefined)?.lastseen;
    this.cleaning.add(id);
    const task: Promise<void> = removeDeadRecord(this.options.client, this.target, id, lastseen, signal).then(
      (removed) => {
        if (removed) this.log.debug("removed the record of a dead peer", { peer: id });
      },
      (error) => {
        if (signal.aborted) return;
        this.log.debug("could not remove a dead peer's record", { peer: id, error: errorText(error) });
      },
    );
    this.background.add(task);
    void task.finally(() => {
      this.cleaning.delete(id);
      this.background.delete(task);
    });
  }
}
