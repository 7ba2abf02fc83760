// Lease mode: leader election over a coordination.k8s.io/v1 Lease, as client-go does it,
// for replicas of ONE operator (equal priorities, where peering would freeze them all).
// Only the holder runs; the others hold the toggle frozen under `lease:<name>`.
//
//   - acquire/renew with PUT + resourceVersion (optimistic concurrency); 409 → re-read;
//   - the holder renews every `retryPeriod`, and freezes at once when `renewDeadline`
//     passes without a successful renewal (one timer, re-armed on each renewal);
//   - a lease counts as expired `duration` after WE saw its record change (local clock, so
//     clock skew between machines does not matter), or at once when nobody holds it;
//   - standbys watch the Lease and retry the moment it changes, so a clean exit of the
//     holder (which releases the lease) hands over within one round trip;
//   - the holder releases the lease on exit, bounded by `exitTimeoutMs`.

import type { KubeObject } from "../kube/index.ts";
import { isConflict, isNotFound } from "../kube/index.ts";
import { linkedSignal, settledSignal, sleep } from "../util/index.ts";
import { Nudge } from "../util/index.ts";
import type { Logger } from "../util/index.ts";
import { supervise } from "../util/index.ts";
import type { WatchEvent } from "../watching/index.ts";
import { Watcher } from "../watching/index.ts";
import { peerId } from "./identity.ts";
import type { LeaseElectionOptions } from "./options.ts";
import { freshLease, newer, releasedLease, renewedLease, specOf, type LeaseSpec } from "../kube/index.ts";
import { leaseResource } from "./resources.ts";
import { leaveLease } from "./lease-leave.ts";

export type { LeaseElectionOptions } from "./options.ts";

export class LeaseElection {
  readonly id: string;
  /** The toggle holder name: `lease:<name>`. */
  readonly holder: string;
  private readonly duration: number;
  private readonly renewDeadline: number;
  private readonly retryPeriod: number;
  private readonly log: Logger;
  /** The freshest Lease we know (from our writes or the watch). */
  private current: KubeObject | undefined;
  /** The record we last saw change, and when (local clock). */
  private observedKey = "";
  private observedAt = 0;
  private held = false;
  private lastRenew = 0;
  private announcedHolder: string | undefined;
  private deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  /** A Lease event cuts the pause short. */
  private readonly nudge = new Nudge();
  /** Aborts an in-flight renewal when the deadline passes. */
  private renewal: AbortController | undefined;

  constructor(private readonly options: LeaseElectionOptions) {
    this.id = options.id ?? peerId();
    this.holder = `lease:${options.name}`;
    this.duration = options.duration * 1000;
    this.renewDeadline = options.renewDeadline * 1000;
    this.retryPeriod = options.retryPeriod * 1000;
    this.log = options.logger.child({ lease: `${options.namespace}/${options.name}` });
  }

  /** True while this replica holds the lease. */
  get leading(): boolean {
    return this.held;
  }

  /**
   * Competes for the lease until `signal` aborts; releases it on exit if held. Freezes the
   * toggle synchronously (before the first await) until the lease is acquired.
   */
  async run(signal: AbortSignal): Promise<void> {
    this.options.toggle.freeze(this.holder, `${this.holder}: not acquired yet`);
    this.options.observer?.leaseHeld(false);
    // Outlives `signal` while a holder's handlers stop: a lease taken from us meanwhile is seen.
    const local = new AbortController();
    const watching = this.watch(local.signal);
    try {
      while (!signal.aborted) {
        this.nudge.clear();
        await this.attempt(signal);
        if (signal.aborted) break;
        await this.nudge.pause(this.nextDelay(), signal);
      }
    } finally {
      // Hand over only once our handlers are done: a standby must not start on objects whose
      // handlers still run here, not even when they take longer than the lease's duration.
      if (this.held) await this.renewUntil(this.options.beforeLeave?.() ?? Promise.resolve());
      local.abort();
      await watching;
      this.clearDeadline();
      if (this.held) await this.release();
      this.options.observer?.leaseHeld(false);
    }
  }

  /** Renews every retryPeriod until `done` (the handlers stopped) or the lease is lost (then they freeze). */
  private async renewUntil(done: Promise<void>): Promise<void> {
    const finished = settledSignal(done);
    while (this.held && (await sleep(this.retryPeriod, finished))) {
      // Cut short when `done` comes: the lease is released next, not after a slow renewal (past the exit's bound).
      if (this.held) await this.attempt(AbortSignal.any([finished, AbortSignal.timeout(this.renewDeadline)]));
    }
    await done;
  }

  private nextDelay(): number {
    if (this.held || !this.current) return this.retryPeriod;
    const spec = specOf(this.current);
    if (!spec.holderIdentity) return 0;
    const expiresIn = this.observedAt + (spec.leaseDurationSeconds ?? 0) * 1000 - Date.now();
    return Math.max(0, Math.min(this.retryPeriod, expiresIn + 1));
  }

  /** One acquire-or-renew round; a 409 re-reads and tries once more. */
  private async attempt(signal: AbortSignal): Promise<void> {
    for (let round = 0; round < 2 && !signal.aborted; round++) {
      const bound = this.held ? this.boundRenewal(signal) : undefined;
      const requestSignal = bound?.signal ?? signal;
      try {
        if (!this.current || round > 0) this.observe(await this.read(requestSignal));
        const now = Date.now();
        const { client, namespace, name } = this.options;
        if (!this.current) {
          const fresh = freshLease(name, namespace, this.id, this.duration, now);
          this.acquired(await client.create(leaseResource, namespace, fresh, { signal: requestSignal }), now);
          return;
        }
        const spec = specOf(this.current);
        if (spec.holderIdentity && spec.holderIdentity !== this.id && !this.expired(spec, now)) {
          this.standBy(spec.holderIdentity);
          return;
        }
        const body = renewedLease(this.current, this.id, this.duration, now);
        this.acquired(await client.replace(leaseResource, namespace, name, body, { signal: requestSignal }), now);
        return;
      } catch (error) {
        if (signal.aborted) return;
        if (isConflict(error)) continue; // someone wrote first: re-read, decide again
        if (isNotFound(error)) this.current = undefined;
        const overdue = this.held && Date.now() - this.lastRenew >= this.renewDeadline;
        if (overdue) this.lose("could not renew the lease within renewDeadline");
        else this.log.debug("lease attempt failed", { error: error instanceof Error ? error.message : String(error) });
        return;
      } finally {
        bound?.dispose();
      }
    }
  }

  private async read(signal: AbortSignal): Promise<KubeObject | undefined> {
    try {
      return await this.options.client.get(leaseResource, this.options.namespace, this.options.name, { signal });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** A signal for a renewal request that aborts when the renew deadline passes. */
  private boundRenewal(signal: AbortSignal): { signal: AbortSignal; dispose(): void } {
    const link = linkedSignal(signal);
    this.renewal = link.controller;
    return {
      signal: link.signal,
      dispose: () => {
        link.dispose();
        if (this.renewal === link.controller) this.renewal = undefined;
      },
    };
  }

  /** Expired: nobody holds it, or its record has not changed for its duration (by our clock). */
  private expired(spec: LeaseSpec, now: number): boolean {
    if (!spec.holderIdentity) return true;
    return this.observedAt + (spec.leaseDurationSeconds ?? 0) * 1000 <= now;
  }

  private acquired(lease: KubeObject, now: number): void {
    this.observe(lease);
    this.lastRenew = now;
    this.armDeadline();
    if (this.held) return;
    this.held = true;
    this.options.observer?.leaseHeld(true);
    this.announcedHolder = this.id;
    this.log.info("acquired the lease: this replica is active");
    this.options.toggle.unfreeze(this.holder);
  }

  private standBy(other: string): void {
    if (this.held) this.lose(`the lease is now held by ${other}`);
    if (this.announcedHolder !== other) {
      this.log.info("standing by: the lease is held by another replica", { holder: other });
      this.announcedHolder = other;
    }
    this.options.toggle.freeze(this.holder, `${this.holder}: held by ${other}`);
  }

  private lose(why: string): void {
    if (!this.held) return;
    this.held = false;
    this.options.observer?.leaseHeld(false);
    this.clearDeadline();
    this.renewal?.abort(new DOMException(why, "TimeoutError"));
    this.announcedHolder = undefined;
    this.log.warn("lost the lease: freezing", { why });
    this.options.toggle.freeze(this.holder, `${this.holder}: lost (${why})`);
    this.nudge.nudge();
  }

  private armDeadline(): void {
    this.clearDeadline();
    const at = this.lastRenew + this.renewDeadline;
    this.deadlineTimer = setTimeout(() => {
      this.deadlineTimer = undefined;
      this.lose("not renewed within renewDeadline");
      this.nudge.nudge();
    }, Math.max(0, at - Date.now()));
  }

  private clearDeadline(): void {
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
  }

  /** Takes a Lease we read, wrote or watched, unless it is older than the one we know. */
  private observe(lease: KubeObject | undefined): void {
    if (!lease) {
      this.current = undefined;
      return;
    }
    if (this.current && !newer(lease.metadata.resourceVersion, this.current.metadata.resourceVersion)) return;
    this.current = lease;
    const spec = specOf(lease);
    const key = `${spec.holderIdentity ?? ""}|${spec.renewTime ?? ""}|${spec.leaseDurationSeconds ?? ""}`;
    if (key !== this.observedKey) {
      this.observedKey = key;
      this.observedAt = Date.now();
    }
  }

  /** Follows the Lease so standbys act the moment it is released or changes hands. */
  private async watch(signal: AbortSignal): Promise<void> {
    const { client, namespace, logger, maxLineBytes } = this.options;
    const limits = maxLineBytes !== undefined ? { maxLineBytes } : {};
    const watcher = new Watcher(client, leaseResource, { namespace, logger, ...limits });
    await supervise(
      {
        open: (s) => watcher.events(s),
        each: (event) => this.observeEvent(event),
        delays: { next: () => this.retryPeriod, reset() {} },
        failed: (error) => {
          const message = error instanceof Error ? error.message : String(error);
          this.log.debug("watching the lease failed; polling every retryPeriod meanwhile", { error: message });
        },
      },
      signal,
    );
  }

  private observeEvent(event: WatchEvent): void {
    if (event.type === "relist-start" || event.type === "relist-done") return;
    if (event.object.metadata.name !== this.options.name) return;
    if (event.type === "deleted") {
      if (!this.held) this.current = undefined;
    } else {
      this.observe(event.object);
      const holder = specOf(event.object).holderIdentity;
      const taken = this.held && this.current === event.object && holder !== this.id;
      if (taken) this.lose(`the lease is now held by ${holder || "nobody"}`);
    }
    this.nudge.nudge();
  }

  /** Hands the lease over (lease-leave.ts); still held if that failed. */
  private async release(): Promise<void> {
    const read = (signal: AbortSignal) => this.read(signal);
    const left = await leaveLease({
      options: this.options, id: this.id, lease: this.current, read, log: this.log, durationMs: this.duration,
    });
    if (left) this.held = false;
  }
}
