// Peering's hold on the freeze Toggle: why it holds it (before the first look, by peers, or
// for a missing peering resource), and the one log line each change of that deserves: one
// when freezing (naming the peer), one when resuming, one warning per conflict episode.

import type { Logger } from "../util/index.ts";
import type { Toggle } from "../util/index.ts";
import { formatTime, type Decision } from "./decide.ts";

/** Why the toggle is held by us: not at all, before the first look, by peers, or by a missing resource. */
type FrozenBy = null | "pending" | "peers" | "missing";

export class PeeringHold {
  private frozenBy: FrozenBy = null;
  private conflictWarned = false;

  constructor(
    private readonly toggle: Toggle,
    /** The toggle holder name: `peering:<namespace|cluster>/<name>`. */
    readonly holder: string,
    private readonly priority: number,
    private readonly log: Logger,
  ) {}

  /** Frozen until the first look at the peers. */
  waitForFirstLook(): void {
    this.frozenBy = "pending";
    this.toggle.freeze(this.holder, `${this.holder}: waiting for the first look at the peers`);
  }

  /** The peering object is missing (`missing`) or cannot be read: stay frozen, saying why. */
  unavailable(why: string, missing: boolean): void {
    // Holding the toggle must be remembered, or a later release() would skip the unfreeze.
    if (missing || this.frozenBy === null) this.frozenBy = "missing";
    this.toggle.freeze(this.holder, `${this.holder}: ${why}`);
  }

  /** Freezes by the decision's top blocker, or releases when nothing blocks. */
  apply(decision: Decision): void {
    const top = decision.blockers[0];
    if (!decision.frozen || !top) return this.release();
    const own = this.priority;
    if (decision.conflict && (this.frozenBy !== "peers" || !this.conflictWarned)) {
      this.log.warn("operators with the same priority conflict: freezing all of them until only one is left", {
        peers: decision.blockers.map((p) => p.id),
        priority: own,
        hint: "give them different priorities, or run one replica",
      });
      this.conflictWarned = true;
    } else if (!decision.conflict && this.frozenBy !== "peers") {
      this.log.info("freezing: a peer with a higher priority is alive", {
        peer: top.id,
        priority: top.priority,
        ownPriority: own,
        until: formatTime(top.deadline),
        message: top.message,
      });
    }
    this.frozenBy = "peers";
    const reason = decision.conflict
      ? `${this.holder}: ${top.id} has the same priority ${own}`
      : `${this.holder}: ${top.id} has priority ${top.priority} > ${own}${top.message ? ` (${top.message})` : ""}`;
    this.toggle.freeze(this.holder, reason);
  }

  /** Releases our hold on the toggle (one log line if it was a real freeze). */
  release(): void {
    if (this.frozenBy === null) return;
    if (this.frozenBy === "peers" || this.frozenBy === "missing") {
      this.log.info("resuming: no peer with a higher or the same priority is alive");
    }
    this.frozenBy = null;
    this.conflictWarned = false;
    this.toggle.unfreeze(this.holder);
  }
}
