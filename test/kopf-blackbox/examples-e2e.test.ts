// Kopf's tests/e2e/test_examples.py, run over the ports in examples/kopf: each example's
// operator is started, Kopf's obj.yaml is applied, and once the creation has settled it is
// deleted and the operator stopped. Then, as Kopf's e2e asserts: the operator did not fail (exit
// code 0); every handler that succeeded, succeeded exactly once (or as often as the example's
// E2E_SUCCESS_COUNTS says); no handler failed for good but those its E2E_FAILURE_COUNTS name, each
// once; and the object was held by a finalizer exactly when Kopf adds one (a delete handler that
// is not optional, a daemon, a timer). The ports' own tests check what each example shows; this
// checks that nothing ran twice or failed unseen.

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { startOperator, type TestOperator } from "kobun/testing";
import { registry as r01 } from "../../examples/kopf/01-minimal/handlers/example.ts";
import { registry as r02 } from "../../examples/kopf/02-children/handlers/example.ts";
import { registry as r03 } from "../../examples/kopf/03-exceptions/handlers/example.ts";
import { registry as r04 } from "../../examples/kopf/04-events/handlers/example.ts";
import { registry as r05 } from "../../examples/kopf/05-handlers/handlers/example.ts";
import { registry as r06 } from "../../examples/kopf/06-peering/handlers/example.ts";
import { registry as r07 } from "../../examples/kopf/07-subhandlers/handlers/example.ts";
import { registry as r08 } from "../../examples/kopf/08-events/handlers/example.ts";
import { registry as r14, timing as t14 } from "../../examples/kopf/14-daemons/handlers/example.ts";
import { allAtOnce } from "../../examples/kopf/99-all-at-once/handlers/example.ts";
import { KopfExamples, sampleObject } from "../../examples/kopf/kopf.ts";
import { CRD, loggedTimes, logLine } from "../../examples/kopf/testing.ts";

const NAME = "kopf-example-1";

/** One example as Kopf's e2e sees it. */
interface Example {
  registry: () => Registry;
  /** Resolves once the creation has settled (Kopf's E2E_CREATION_STOP_WORDS, or every handler done). */
  created?: (kit: TestOperator) => Promise<unknown>;
  successes?: Record<string, number>;
  failures?: Record<string, number>;
  /** Whether Kopf puts its finalizer on the object (a mandatory on.delete, a daemon, a timer). */
  finalizer: boolean;
}

const handled = (kit: TestOperator) =>
  kit.until(KopfExamples, NAME, (o) => o.status?.kobun?.lastHandledConfiguration, { timeout: 15_000 });

const EXAMPLES: Record<string, Example> = {
  "01-minimal": { registry: () => r01, finalizer: false },
  "02-children": { registry: () => r02, finalizer: false },
  "03-exceptions": {
    registry: () => r03, finalizer: false,
    successes: { eventual_success_with_a_few_messages: 1 },
    failures: { eventual_failure_with_tracebacks: 1, instant_failure_with_traceback: 1, instant_failure_with_only_a_message: 1 },
  },
  "04-events": { registry: () => r04, finalizer: false },
  "05-handlers": { registry: () => r05, finalizer: true },
  "06-peering": { registry: () => r06, finalizer: false },
  "07-subhandlers": { registry: () => r07, finalizer: false },
  "08-events": {
    registry: () => r08, finalizer: false, successes: { normal_event_fn: 2 },
    created: (kit) => kit.logs.until("Handler 'normal_event_fn' succeeded."),
  },
  "14-daemons": {
    registry: () => r14, finalizer: true,
    created: async (kit) => {
      await kit.logs.until(/=> Ping from a sync daemon/, { timeout: 15_000 });
      await kit.logs.until(/=> Ping from an async daemon/, { timeout: 15_000 });
    },
  },
  "99-all-at-once": {
    registry: () => allAtOnce(new Registry(), 0.02), finalizer: true,
    successes: {
      create_1: 1, create_2: 1, create_pod: 1, delete: 1, startup_fn_simple: 1, startup_fn_retried: 1, cleanup_fn: 1,
    },
  },
};

/** The ids of Kopf's e2e regexps, counted over the log: `'(.+?)' succeeded`, `'(.+?)' failed permanently`. */
function counts(lines: readonly string[], pattern: RegExp): Record<string, number> {
  const found: Record<string, number> = {};
  for (const line of lines) {
    const id = pattern.exec(line)?.[1];
    if (id !== undefined) found[id] = (found[id] ?? 0) + 1;
  }
  return found;
}

const only = (all: Record<string, number>, names: Record<string, number>) =>
  Object.fromEntries(Object.entries(all).filter(([name]) => name in names));

for (const [name, example] of Object.entries(EXAMPLES)) {
  test(`${name}: Kopf's e2e: nothing succeeds twice, nothing fails unseen, the finalizer as Kopf's`, async () => {
    Object.assign(t14, { retryDelay: 0.05, ping: 0.05, accompany: 30 });
    const kit = await startOperator({ registry: example.registry(), crds: [CRD], logLevel: "silent", timeout: 10_000 });
    try {
      await kit.apply(KopfExamples, sampleObject());
      await (example.created ?? handled)(kit);
      const seen = await kit.get(KopfExamples, NAME);
      expect(seen?.metadata.finalizers?.includes("kobun.dev/finalizer") ?? false).toBe(example.finalizer);
      await kit.delete(KopfExamples, NAME);
      await kit.gone(KopfExamples, NAME);
      if (name === "08-events") await loggedTimes(kit.logs, logLine("Handler 'normal_event_fn' succeeded."), 2);
    } finally {
      await kit.stop(); // rejects if the operator failed: Kopf's exit_code == 0
    }
    const successes = counts(kit.logs.lines, / '(.+?)' succeeded\./);
    if (example.successes) expect(only(successes, example.successes)).toEqual(example.successes);
    else expect(new Set(Object.values(successes))).toEqual(new Set([1]));
    const failures = counts(kit.logs.lines, / '(.+?)' failed permanently/);
    expect(example.failures ? only(failures, example.failures) : failures).toEqual(example.failures ?? {});
  }, 30_000);
}
