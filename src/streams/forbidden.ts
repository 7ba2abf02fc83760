// What a 403 on a watch means for the operator (README: "Exit codes", code 5).
//   - A stream started with the operator that is forbidden before it ever worked: the
//     deployment lacks a permission. Retrying cannot help, so exit 5 at once, naming the
//     resource, the namespace and the verb.
//   - A stream that worked and is now forbidden (RBAC changed under us), or one of a namespace
//     a glob found later (its RoleBinding may arrive a moment after it): retried with the
//     reconnect backoff and reported on /healthz; `FORBIDDEN_LIMIT` forbidden attempts in a row,
//     with no working watch between them, exit 5.
// "Worked" means a change arrived through the watch, or the stream stayed up for the healthy
// period (`watching.reconnectHealthyAfter`) after a complete LIST.

import type { WatchEvent } from "../watching/index.ts";
import { WatchError } from "../watching/index.ts";

/**
 * A 403 that ends the operator. The streams do not decide how a process ends: runtime/ turns
 * this into its FatalError (exit 5), with the same message.
 */
export class PermissionsLacking extends Error {
  override readonly name = "PermissionsLacking";
}

/** Forbidden attempts in a row after which a stream that worked gives up (exit 5). */
export const FORBIDDEN_LIMIT = 10;

export interface ForbiddenRuleOptions {
  /** The stream started with the operator, so a 403 before it worked is a deploy error. */
  fatalAtOnce: boolean;
  /** How long up after a LIST counts as having worked. */
  healthyAfterMs: number;
}

export class ForbiddenRule {
  private worked = false;
  private streak = 0;
  private listedAt: number | undefined;

  private readonly fatalAtOnce: boolean;
  private readonly healthyAfterMs: number;

  constructor(options: ForbiddenRuleOptions) {
    this.fatalAtOnce = options.fatalAtOnce;
    this.healthyAfterMs = options.healthyAfterMs;
  }

  /** Every event the stream delivers. */
  saw(event: WatchEvent): void {
    if (event.type === "relist-done") this.listedAt = Date.now();
    else if (event.type === "added" || event.type === "modified" || (event.type === "deleted" && !event.synthetic)) {
      this.working();
    }
  }

  /** An attempt ended with `error`. Throws the PermissionsLacking that ends the operator, if it does. */
  failed(error: unknown): void {
    if (this.listedAt !== undefined && Date.now() - this.listedAt >= this.healthyAfterMs) this.working();
    this.listedAt = undefined;
    if (!(error instanceof WatchError) || error.code !== 403) return;
    if (this.fatalAtOnce && !this.worked) {
      throw new PermissionsLacking(`permissions lacking at start-up: ${error.message}`, { cause: error });
    }
    if (++this.streak >= FORBIDDEN_LIMIT) {
      const message = `permissions lacking: forbidden ${this.streak} times in a row: ${error.message}`;
      throw new PermissionsLacking(message, { cause: error });
    }
  }

  private working(): void {
    this.worked = true;
    this.streak = 0;
  }
}
