// Whether a relist asks for a streaming list (sendInitialEvents), and what a watcher has learned
// of the server's support for it. Kept apart from the Watcher's I/O: "auto" tries it once and
// remembers the answer, "always" fails without it, "never" uses paged LISTs only.

import type { Status } from "../kube/index.ts";
import { WatchError } from "./errors.ts";

export class StreamingListSupport {
  /** undefined until a streaming list has been tried and answered (worked, or refused in "auto"). */
  private supported: boolean | undefined;

  constructor(
    readonly mode: "auto" | "always" | "never",
    private readonly resourceName: string,
  ) {}

  /** Whether the next relist asks for a streaming list. */
  get wanted(): boolean {
    return this.mode === "always" || (this.mode === "auto" && this.supported !== false);
  }

  /** No streaming list has been answered yet: a rejection of this one means the server has none. */
  get untried(): boolean {
    return this.supported === undefined;
  }

  /**
   * Tried for the first time in "auto": a stream that ends or goes silent before its initial events
   * end means the server ignored the request.
   */
  get probing(): boolean {
    return this.mode === "auto" && this.supported === undefined;
  }

  /** A streaming list reached its initial-events-end bookmark. */
  worked(): void {
    this.supported = true;
  }

  /** The server has no streaming list: a WatchError in "always"; otherwise paged LISTs from now on. */
  refused(why: string, status?: Status): void {
    if (this.mode === "always") {
      throw new WatchError(`streaming list of ${this.resourceName} not possible: ${why}`, { status });
    }
    this.supported = false;
  }
}
