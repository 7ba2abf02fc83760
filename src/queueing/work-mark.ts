// On a virtual clock (util/clock.ts), the queue marks work in progress while an item waits to
// start (in its batch window, or in line for a permit), so that advancing time waits for the runs
// a firing caused before it fires the next timer. The runs themselves are tracked by the clock
// (`track`: busy, except while they sleep on it); an item behind a busy run waits for that run,
// which may be waiting for time, so it is not counted. On the machine's clock nothing is scanned.

import { clock } from "../util/index.ts";
import type { Slot } from "./slot.ts";

export class WorkMark {
  private end: (() => void) | undefined;

  /** Looks again at the slots (a scan: the tests' cost only, asked on a virtual clock alone). */
  note(slots: ReadonlyMap<string, Slot<unknown>>): void {
    const time = clock();
    if (!time.virtual && !this.end) return;
    if (time.virtual && waiting(slots)) {
      this.end ??= time.working();
    } else if (this.end) {
      this.end();
      this.end = undefined;
    }
  }
}

function waiting(slots: ReadonlyMap<string, Slot<unknown>>): boolean {
  for (const slot of slots.values()) if (slot.hasPending && slot.stage !== "busy") return true;
  return false;
}
