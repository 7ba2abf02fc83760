// on.login's renewals on /healthz: renewals failing without a break for LOGIN_UNHEALTHY_AFTER_MS
// make the "login" problem (503), and the first request that gets through with renewed
// credentials clears it. Short failures (a vault restarting) stay in the log only.

import type { Connection } from "../kube/index.ts";
import type { RenewalFailure } from "../kube/index.ts";
import type { Health } from "../observability/index.ts";

/** How long renewals may fail without a break before /healthz reports it (the README says so). */
export const LOGIN_UNHEALTHY_AFTER_MS = 60_000;

/**
 * Reports `connection`'s failing renewals (a login connection's; others have none) on `health`
 * until `signal` aborts.
 */
export function reportLoginRenewals(
  connection: Connection, health: Health, signal: AbortSignal, boundMs = LOGIN_UNHEALTHY_AFTER_MS,
): void {
  if (!connection.watchRenewal || signal.aborted) return;
  const component = health.component("login", signal);
  let failing: RenewalFailure | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const report = () => {
    if (!failing) return;
    const { since, failures, error } = failing;
    const started = new Date(since).toISOString();
    const attempts = `${failures} attempts`;
    component.fail(`on.login has failed to renew the credentials since ${started} (${attempts}): ${error.message}`);
  };
  const unwatch = connection.watchRenewal((failure) => {
    failing = failure;
    if (!failure) {
      clearTimeout(timer);
      timer = undefined;
      return component.clear();
    }
    const due = failure.since + boundMs - Date.now();
    if (due <= 0) report();
    else timer ??= setTimeout(() => {
      timer = undefined;
      report();
    }, due);
  });
  signal.addEventListener("abort", () => {
    clearTimeout(timer);
    unwatch();
  }, { once: true });
}
