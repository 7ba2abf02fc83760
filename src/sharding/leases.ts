// ShardLeases: the I/O around assign.ts. One Lease per shard (`<group>-shard-<i>`) and one
// membership Lease per replica (`<group>-member-<id>`), all labelled `kobun.dev/shard-group`,
// in one namespace; written as client-go writes leader-election Leases (PUT with
// resourceVersion, so two replicas never both win a shard; a 409 means someone else did).
//
//   - every retryPeriod, in a loop of its own (a handover may wait out its grace meanwhile):
//     renew the membership and the held shards; on any Lease event (a label-selected watch, a
//     slow resync LIST as a safety net), after each renewal, and when a lease or member is due
//     to expire: decide (assign.ts) and act: release the excess, acquire free shards;
//   - a held shard not renewed within renewDeadline is lost at once, by a timer (a renewal that
//     hangs on a dead network path must not keep it): its work is aborted, so it has stopped
//     (freezeGracePeriod later) before anyone can take the lease (duration); each renewal
//     request is bounded by renewDeadline too, so a hung one does not stall the rounds;
//   - handover never overlaps: a shard given up is first stopped (its signal aborts), its
//     running cycles are waited for (bounded by the grace, then abandoned), and only then is
//     its Lease released; on exit the same for every shard, then the membership is deleted.

import type { KubeClient } from "../kube/index.ts";
import { specOf } from "../kube/index.ts";
import { sleep } from "../util/index.ts";
import { Nudge } from "../util/index.ts";
import type { Logger } from "../util/index.ts";
import type { WatchClient } from "../watching/index.ts";
import { assign, coverage, liveHolder, type AssignmentInput, type Coverage } from "./assign.ts";
import { ShardHolds } from "./holds.ts";
import { GROUP_LABEL, LeaseBook, memberLeaseName } from "./lease-book.ts";
import { LeaseWriter } from "./lease-writer.ts";
import { NotTaking } from "./not-taking.ts";
import { RenewDeadlines } from "./renew-deadlines.ts";
import { coverageReport, waitingReport, type HandoverDirection, type ShardObserver } from "./observer.ts";

export type ShardClient = Pick<KubeClient, "get" | "create" | "replace" | "delete"> & WatchClient;

export { GROUP_LABEL, memberLeaseName };

export interface ShardLeasesOptions {
  client: ShardClient;
  namespace: string;
  /** Names the Leases; replicas of one operator share it. */
  group: string;
  shards: number;
  id: string;
  durationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** How long a shard's running cycles may take to stop at a handover before they are abandoned. */
  graceMs: number;
  logger: Logger;
  /** The owned shards changed (acquired or given up). */
  onChange?(owned: readonly number[]): void;
  /** Replicas with another shard count began (or stopped) holding shards this replica waits on. */
  onWaiting?(waiting: { shards: number; holders: string[] } | undefined): void;
  /**
   * What is kept per object of these shards is to be forgotten: they were given up and their
   * work has ended (or was abandoned), or they are about to be taken (then as at start-up).
   */
  onForget?(shards: readonly number[]): void;
  /** A fresh LIST of the Leases this often, besides the watch (default max(60 s, 4 × duration)). */
  resyncMs?: number;
  /** Hears the owned shards, handovers and coverage (runtime/ makes them metrics). */
  observer?: ShardObserver;
  /**
   * Awaited when `run()`'s signal aborts, before the shards are handed over (the runtime: "the handlers
   * have finished", bounded by the shutdown's grace): a stop is a shutdown first, so the running cycles
   * finish and write as an unsharded operator's do; the Leases are renewed meanwhile.
   */
  beforeLeave?: () => Promise<void>;
}

export class ShardLeases {
  /** Which shards' cycles run, and the signal each is stopped by. */
  readonly holds: ShardHolds;
  private readonly log: Logger;
  private readonly book: LeaseBook;
  private readonly writer: LeaseWriter;
  private readonly deadlines: RenewDeadlines;
  /** A Lease event cuts the pause short. */
  private readonly nudge = new Nudge();
  private readonly reportCoverage: (found: Coverage) => void;
  private readonly reportWaiting: ReturnType<typeof waitingReport>;
  private readonly notTaking: NotTaking;

  constructor(private readonly options: ShardLeasesOptions) {
    this.deadlines = new RenewDeadlines(options.renewDeadlineMs, (index, why) => this.lose(index, why));
    this.holds = new ShardHolds(options.shards, (index) => this.deadlines.lapsed(index));
    this.log = options.logger.child({ shards: `${options.namespace}/${options.group}` });
    this.reportCoverage = coverageReport(this.log, options.observer);
    this.reportWaiting = waitingReport(this.log, options.shards, (waiting) => options.onWaiting?.(waiting));
    const resyncMs = options.resyncMs ?? Math.max(60_000, 4 * options.durationMs);
    this.book = new LeaseBook({ ...options, resyncMs, changed: () => this.nudge.nudge() });
    this.writer = new LeaseWriter(options, this.book, this.log);
    this.notTaking = new NotTaking(options.durationMs);
  }

  shardLeaseName(index: number): string {
    return `${this.options.group}-shard-${index}`;
  }

  get owned(): number[] {
    return this.holds.owned();
  }

  /** Takes part until `signal` aborts; then stops every shard's work, releases them and leaves. */
  async run(signal: AbortSignal): Promise<void> {
    // Outlives `signal` until beforeLeave() resolved: the Leases stay renewed while the handlers stop.
    const local = new AbortController();
    const watching = this.book.watch(local.signal);
    let renewing = Promise.resolve();
    try {
      await this.renewAll(signal); // our membership is known before the first decision
      renewing = this.renewEvery(local.signal);
      await this.book.primed(signal); // and the others' Leases are (another count's among them)
      while (!signal.aborted) {
        this.nudge.clear();
        const nextChangeAt = await this.decide(signal);
        if (signal.aborted) break;
        // Each renewal nudges too: a decision at least every retryPeriod, as when they took turns.
        const wakeAt = nextChangeAt ?? Date.now() + this.options.retryPeriodMs;
        await this.nudge.pause(Math.max(0, wakeAt - Date.now()), signal);
      }
    } finally {
      if (this.holds.owned().length > 0) await this.options.beforeLeave?.();
      local.abort();
      await Promise.all([watching, renewing]);
      await this.leave();
    }
  }

  /**
   * Renews every retryPeriod beside the decisions (a handover may wait a whole grace), then asks
   * for one. A Lease event asks for a decision only: renewing on every event made each renewal
   * set off the others' (thousands of PUTs a second with 3 replicas).
   */
  private async renewEvery(signal: AbortSignal): Promise<void> {
    let renewAt = Date.now() + this.options.retryPeriodMs;
    while (await sleep(renewAt - Date.now(), signal)) {
      renewAt = Date.now() + this.options.retryPeriodMs;
      await this.renewAll(signal);
      this.nudge.nudge();
    }
  }

  private async renewAll(signal: AbortSignal): Promise<void> {
    // All at once: one after another, a slow server (or a busy event loop) would put the last
    // shard's renewal past its renewDeadline.
    await Promise.all([this.renewMembership(signal), ...this.holds.owned().map((index) => this.renew(index, signal))]);
  }

  private assignmentInput(): AssignmentInput {
    const { id: self, shards } = this.options;
    return {
      now: Date.now(), self, shards,
      leases: this.book.leaseViews(shards, (i) => this.shardLeaseName(i)), members: this.book.memberViews(),
      held: new Set(this.holds.owned()), notTaking: this.notTaking.ids, foreign: this.book.foreignViews(shards),
    };
  }

  /**
   * Acts on what the Leases say now (no I/O unless a shard is to be taken or given up); returns when
   * to decide again at the latest.
   */
  private async decide(signal: AbortSignal): Promise<number | undefined> {
    const seen = this.assignmentInput();
    for (const replica of this.notTaking.update(seen)) {
      this.log.info(
        "a replica stayed below its share with shards there for it: shares are made without it until it takes one",
        { replica },
      );
    }
    const found = coverage(seen);
    this.reportCoverage(found);
    // A held shard whose Lease names another live holder (the watch says so before our next
    // renewal would fail): stop its work now rather than at that renewal.
    for (const index of found.overlaps) {
      const holder = liveHolder(seen.leases[index]!, seen.now);
      if (holder !== undefined) this.lose(index, `the lease is now held by ${holder}`);
    }
    let input = seen;
    if (found.overlaps.length > 0) {
      input = this.assignmentInput();
      this.reportCoverage(coverage(input));
    }
    const decision = assign(input);
    this.reportWaiting(decision.waitingFor);
    if (decision.release.length > 0) {
      const why = decision.waitingFor
        ? "replicas with a larger shard count hold shards"
        : "rebalancing: a replica below its share";
      await this.handOver(decision.release, why);
    }
    // All at once, and one change for all: the shards taken together start together (one
    // stream with a fresh LIST of their ranges, streams/shard-streams.ts), not one by one.
    const won = await Promise.all(decision.acquire.map((index) => this.acquire(index, signal)));
    const acquired = decision.acquire.filter((_, n) => won[n]);
    if (acquired.length > 0) {
      // Held from the announcement on, not from each PUT's answer: a shard held earlier had its
      // events handled before the streams replayed it, with the indexes lacking it.
      this.options.onForget?.(acquired); // what an earlier hold left (its cycles may outlive the grace)
      for (const index of acquired) this.holds.start(index);
      this.changed("acquired", acquired);
    }
    return decision.nextChangeAt;
  }

  private async renewMembership(signal: AbortSignal): Promise<void> {
    await this.writer.write(memberLeaseName(this.options.group, this.options.id), "member", this.bounded(signal));
  }

  /** A renewal's signal: no later than renewDeadline, by when an unrenewed shard is lost anyway. */
  private bounded(signal: AbortSignal): AbortSignal {
    return AbortSignal.any([signal, AbortSignal.timeout(this.options.renewDeadlineMs)]);
  }

  private async renew(index: number, signal: AbortSignal): Promise<void> {
    const name = this.shardLeaseName(index);
    const sentAt = performance.now();
    if (await this.writer.write(name, "shard", this.bounded(signal))) {
      if (this.holds.has(index)) this.deadlines.renewed(index, sentAt);
      return;
    }
    const holder = specOf(this.book.get(name) ?? { metadata: {} }).holderIdentity;
    if (holder && holder !== this.options.id) this.lose(index, `the lease is now held by ${holder}`);
    else if (this.deadlines.overdue(index)) this.lose(index, "not renewed within renewDeadline");
  }

  /** Takes a free shard's Lease; true when it is ours now (decide() starts its work). */
  private async acquire(index: number, signal: AbortSignal): Promise<boolean> {
    const name = this.shardLeaseName(index);
    const known = this.book.get(name);
    const holder = known ? specOf(known).holderIdentity : undefined;
    // The decision was made on the views of the round's start; the watch may have brought a
    // new holder since. The PUT carries the resourceVersion of what is checked here, so a
    // write that raced us fails with 409 instead of taking a shard from its live holder.
    const view = this.assignmentInput().leases[index]!;
    const heldByAnother =
      holder !== undefined && holder !== this.options.id && liveHolder(view, Date.now()) !== undefined;
    if (signal.aborted || heldByAnother) return false;
    const sentAt = performance.now();
    if (!(await this.writer.write(name, "shard", signal))) return false;
    this.deadlines.renewed(index, sentAt); // its deadline runs from this write; it is held once the round is announced
    const from = holder && holder !== this.options.id ? { from: holder } : {};
    this.log.info("acquired a shard", { shard: index, ...from });
    return true;
  }

  /** Stops at once (no waiting: the lease is no longer ours to hold). */
  private lose(index: number, why: string): void {
    if (!this.holds.has(index)) return;
    // Its state goes once its cycles ended; a shard taken back meanwhile was forgotten at that take.
    const forgetUnlessRetaken = () => this.holds.has(index) || this.options.onForget?.([index]);
    void this.holds.stop(index, this.options.graceMs).then(forgetUnlessRetaken);
    this.deadlines.forget(index);
    this.log.warn("lost a shard: its work is stopped", { shard: index, why });
    this.changed("abandoned", [index]);
  }

  /** Stops the shards' work, waits for it (bounded by the grace), then releases their Leases. */
  private async handOver(indexes: number[], why: string): Promise<void> {
    for (const index of indexes) this.log.debug("handing over a shard: its work is stopped", { shard: index, why });
    const abandoned = await Promise.all(indexes.map((index) => this.holds.stop(index, this.options.graceMs)));
    this.options.onForget?.(indexes);
    this.options.onChange?.(this.holds.owned());
    this.options.observer?.owned(this.holds.owned());
    const timeout = AbortSignal.timeout(Math.max(2000, this.options.retryPeriodMs));
    for (const [n, index] of indexes.entries()) {
      if (abandoned[n]) {
        this.log.warn(
          "handing over a shard whose cycles ignored their signal past the grace; nothing more is written for them",
          { shard: index, abandoned: abandoned[n] },
        );
      }
      this.deadlines.forget(index);
      const released = await this.writer.release(index, this.shardLeaseName(index), timeout);
      if (released) this.log.info("released a shard", { shard: index, why });
      this.options.observer?.handover(released && !abandoned[n] ? "released" : "abandoned", index);
    }
  }

  /** The owned shards changed: the listener (streams restart), then the observer. */
  private changed(direction: HandoverDirection, indexes: readonly number[]): void {
    const owned = this.holds.owned();
    this.options.onChange?.(owned);
    this.options.observer?.owned(owned);
    for (const index of indexes) this.options.observer?.handover(direction, index);
  }

  private async leave(): Promise<void> {
    const owned = this.holds.owned();
    if (owned.length > 0) await this.handOver(owned, "stopping");
    await this.writer.leave();
  }
}
