// A simulated run's settling, on its virtual clock: after each step the operator goes quiet (no
// work in progress, none begun and no write, request or log line for a short real quiet, no watch
// line on its way: sent by the sandbox and not yet read by the live instance, or an instance still
// listing), then every timer due within the horizon fires, one at a time, quiet after each —
// retries, backoffs, requeueAfter, timers and delayed watch events play out at once. A settle
// fails as such when the operator never goes quiet within the real-time bound (a tight loop) or
// when timers keep firing past the allowed count (a storm in time).
//
// Delayed watch events are timers on the same clock (the sandbox counts its delays in it). The
// operator may be busy waiting for one (a handler held until an index has listed): work that
// stands still for STALL_MS of real time while a line is held lets time move on to the next timer,
// as it would while the operator waits on the network; past the window's end too, as far as the
// earliest held line (an instance restarted by a timer at the window's last instant lists through
// a lagging watch: a step is not over before its delayed events are in).

import type { DelayTime } from "@kobun/sandbox";
import type { VirtualClock } from "../util/index.ts";
import { advanceClock, fireDue, quiet, StillBusy, TimerStorm, type Activity, type AdvanceBounds } from "./advance.ts";

export interface SettleLimits {
  /** virtual ms after a step within which due timers fire */
  horizonMs: number;
  /** timers one settle may fire */
  maxFirings: number;
  /** real ms each wait for quiet may take */
  timeoutMs: number;
}

/** a settle that went wrong: why, in the words of a report */
export class Unsettled extends Error {
  constructor(message: string) {
    super(message);
    this.name = "Unsettled";
  }
}

/**
 * Real ms of quiet after work: shorter than the kit's (advance.ts), as the watch lines on their way
 * to the operator are counted (sent by the sandbox, read by the operator), not waited out.
 */
const QUIET_MS = 5;
/** Real ms busy work must stand still before time moves on for the watch events it may wait for. */
const STALL_MS = 50;
/** Real ms a watch line may be on its way, nothing else moving, before it counts as lost (its stream closed). */
const LOST_MS = 1000;

/** the watch lines between the sandbox and the live operator instance */
export interface Lines {
  sent(): number;
  read(): number;
  /** the instance has not listed every resource yet (its streams may not have reached the sandbox) */
  listing(): boolean;
}

export class Settler {
  private readonly bounds: AdvanceBounds;
  private readonly started: number;
  /** the due times of held watch lines (the sandbox's delays) */
  private readonly held = new Set<{ at: number }>();
  /** the end of the window being played out */
  private windowEnd = 0;
  private stallFirings = 0;

  constructor(private readonly time: VirtualClock, private readonly limits: SettleLimits, parts: {
    failed: AbortSignal; activity: Activity; lines: Lines;
  }) {
    const stall = { ms: STALL_MS, fire: () => this.fireForStall() };
    const { lines, ...rest } = parts;
    const onTheWay = () => this.onTheWay(lines);
    this.bounds = {
      timeoutMs: limits.timeoutMs, maxFirings: limits.maxFirings, quietMs: QUIET_MS, stall, onTheWay, ...rest,
    };
    this.started = time.now();
  }

  /** the time the sandbox's watch delays count in: this clock, each held line noted */
  readonly network: DelayTime = {
    now: () => this.time.now(),
    timer: (ms, fire) => {
      const line = { at: this.time.now() + Math.max(0, ms) };
      this.held.add(line);
      const cancel = this.time.timer(ms, () => {
        this.held.delete(line);
        fire();
      });
      return () => {
        this.held.delete(line);
        cancel();
      };
    },
  };

  /** quiet, then the timers due within the horizon fired */
  async settle(): Promise<void> {
    this.windowEnd = this.time.now() + this.limits.horizonMs;
    this.stallFirings = 0;
    await this.explained(async () => {
      await quiet(this.time, this.bounds, "");
      await fireDue(this.time, this.windowEnd, this.bounds, "");
    });
  }

  /** quiet, then virtual time moved `seconds` on, every timer due in the window fired */
  advance(seconds: number): Promise<void> {
    this.windowEnd = this.time.now() + Math.max(0, seconds) * 1000;
    this.stallFirings = 0;
    return this.explained(() => advanceClock(this.time, seconds, this.bounds));
  }

  /** what was on its way when last looked at, and since when (real ms) */
  private waiting: { sent: number; read: number; since: number } | undefined;

  /**
   * A watch line sent and not read yet, or an instance starting or listing with no timer pending
   * (it may wait for one: a held-back line, a startup handler's sleep; fired when due); unless
   * nothing moved for LOST_MS (a stream closed with a line unread, a watch that never lists),
   * which a settle then does not wait for.
   */
  private onTheWay(lines: Lines): boolean {
    const sent = lines.sent();
    const read = lines.read();
    if (sent <= read && !(lines.listing() && this.time.counts().waiting === 0)) {
      this.waiting = undefined;
      return false;
    }
    const now = performance.now();
    if (sent !== this.waiting?.sent || read !== this.waiting.read) this.waiting = { sent, read, since: now };
    return now - this.waiting.since < LOST_MS;
  }

  /** fires the next timer while busy work stands still, if a watch line is held (due by the window's end, or after) */
  private fireForStall(): boolean {
    if (this.held.size === 0) return false;
    if (++this.stallFirings > this.limits.maxFirings) {
      throw new TimerStorm(`more than ${this.limits.maxFirings} timers fired while the operator waited`, 0);
    }
    const firstHeld = Math.min(...[...this.held].map((line) => line.at));
    return this.time.fireNext(Math.max(this.windowEnd, firstHeld));
  }

  private async explained(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      if (error instanceof StillBusy) {
        throw new Unsettled(`the operator never went quiet within ${this.limits.timeoutMs} ms of real time ` +
          `(${error.inProgress} piece(s) of work in progress: a loop without pause, or a wait that never ends?)`);
      }
      if (error instanceof TimerStorm) {
        throw new Unsettled(`timers kept firing: more than ${this.limits.maxFirings} in one settle, the last ` +
          `${Math.round((this.time.now() - this.started) / 1000)} virtual s into the run ` +
          "(a handler re-running itself without pause?)");
      }
      throw error;
    }
  }
}
