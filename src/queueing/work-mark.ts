// On a virtual clock (util/clock.ts), the queue marks work in progress while a key is busy or has
// an item waiting (its batch window, a permit), so that advancing time waits for the runs a firing
// caused before it fires the next timer. On the machine's clock nothing is marked or scanned.

import { clock } from "../util/index.ts";

export class WorkMark {
  private end: (() => void) | undefined;

  /** Looks again; `working` (a scan of the keys: the tests' cost only) is asked on a virtual clock alone. */
  note(working: () => boolean): void {
    const time = clock();
    if (!time.virtual && !this.end) return;
    if (time.virtual && working()) {
      this.end ??= time.working();
    } else if (this.end) {
      this.end();
      this.end = undefined;
    }
  }
}
