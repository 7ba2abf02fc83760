// Every kind of bad value in kobun.yaml gets a message naming the file, the key path, what
// was expected and what was got; all problems come together in one ConfigError.

import { describe, expect, test } from "bun:test";
import { ConfigError, resolveSettings } from "../../src/config/index.ts";

function problems(fileData: unknown, flags = {}): string[] {
  try {
    resolveSettings({ file: "kobun.yaml", fileData, flags });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message.split("\n");
  }
  throw new Error("expected a ConfigError");
}

describe("config validation messages", () => {
  test("wrong type names the expected type and the value got", () => {
    expect(problems({ peering: { priority: "high" } })).toEqual(['kobun.yaml: peering.priority: expected an integer, got "high"']);
  });

  test("a metrics address without its port (and not an http:// URL) is refused, not left to fail at listen", () => {
    const expected = 'expected an address like ":8080", "0.0.0.0:8080" or "http://0.0.0.0:8080", or null (only on the probe listener)';
    expect(problems({ metrics: { address: "nonsense" } })).toEqual([`kobun.yaml: metrics.address: ${expected}, got "nonsense"`]);
    expect(problems({ metrics: { address: ":abc" } })).toEqual([`kobun.yaml: metrics.address: ${expected}, got ":abc"`]);
    for (const address of [":8080", "0.0.0.0:9090", "localhost:9", "http://0.0.0.0:9090"]) {
      expect(resolveSettings({ file: "kobun.yaml", fileData: { metrics: { address } } }).metrics.address).toBe(address);
    }
  });

  test("out of range names the range", () => {
    expect(problems({ watching: { pageSize: 0 } })).toEqual(["kobun.yaml: watching.pageSize: expected an integer from 1 to 10000, got 0"]);
    expect(problems({ peering: { lifetime: "2h" } })).toEqual(['kobun.yaml: peering.lifetime: expected a duration from 1s to 1h, got "2h"']);
    expect(problems({ watching: { clusterWideAbove: -1 } })).toEqual(["kobun.yaml: watching.clusterWideAbove: expected an integer from 0 to 1000000, got -1"]);
  });

  test("unknown key suggests the closest known key and lists the allowed ones", () => {
    expect(problems({ watching: { pagesize: 10 } })).toEqual([
      'kobun.yaml: watching.pagesize: unknown key; did you mean "pageSize"? (allowed here: serverTimeout, clientTimeout, pageSize, lineLimit, backoff, reconnectHealthyAfter, clusterWideAbove)',
    ]);
  });

  test("unknown key without a close match lists the allowed ones only", () => {
    expect(problems({ shutdown: { zzz: 1 } })).toEqual(["kobun.yaml: shutdown.zzz: unknown key (allowed here: gracePeriod)"]);
  });

  test("unknown top-level section", () => {
    expect(problems({ peerig: {} })[0]).toStartWith('kobun.yaml: peerig: unknown key; did you mean "peering"?');
  });

  test("a section that is not a mapping", () => {
    expect(problems({ logging: "json" })).toEqual(['kobun.yaml: logging: expected a mapping with keys format, level; got "json"']);
  });

  test("a file that is not a mapping", () => {
    expect(problems(["a"])[0]).toStartWith("kobun.yaml: (top level): expected a mapping with keys peering, namespaces");
  });

  test("enum values are listed", () => {
    expect(problems({ logging: { format: "xml" } })).toEqual(['kobun.yaml: logging.format: expected one of "plain", "json", got "xml"']);
  });

  test("nullable fields say what null means", () => {
    expect(problems({ handling: { retries: -1 } })).toEqual([
      "kobun.yaml: handling.retries: expected an integer of at least 1, or null (retry forever), got -1",
    ]);
  });

  test("handling.retries: 0 is refused, globally and per resource: it counts attempts, as a handler's own retries does (it used to mean retry forever)", () => {
    expect(problems({ handling: { retries: 0 } })).toEqual([
      "kobun.yaml: handling.retries: expected an integer of at least 1, or null (retry forever), got 0",
    ]);
    expect(problems({ resources: { "v1/configmaps": { handling: { retries: 0 } } } })).toEqual([
      "kobun.yaml: resources.v1/configmaps.handling.retries: expected an integer of at least 1, or null (retry forever), got 0",
    ]);
  });

  test("a bad list entry is reported at its index", () => {
    expect(problems({ namespaces: { include: ["team-*", "Bad_NS"] } })).toEqual([
      'kobun.yaml: namespaces.include[1]: expected a namespace name or glob like "team-*" (lowercase letters, digits, "-", "*", "?"), optionally negated with "!", got "Bad_NS"',
    ]);
  });

  test("liveness must be an http URL", () => {
    expect(problems({ probes: { liveness: "ftp://x" } })).toEqual([
      'kobun.yaml: probes.liveness: expected an http:// URL like "http://0.0.0.0:8080/healthz", or null (no probe endpoint), got "ftp://x"',
    ]);
  });

  test("relations between fields", () => {
    expect(problems({ peering: { lease: { renewDeadline: "20s" } } })).toEqual([
      "kobun.yaml: peering.lease.renewDeadline: expected less than peering.lease.duration (15s), got 20s",
    ]);
    expect(problems({ namespaces: { include: ["team-a"], allNamespaces: true } })).toEqual([
      'kobun.yaml: namespaces.allNamespaces: cannot be combined with included namespaces (team-a); to narrow a cluster-wide watch, exclude with "!glob"',
    ]);
  });

  test("a reconcile backoff's initial wait above its max is refused, globally and per resource (it was taken, and never waited)", () => {
    expect(problems({ reconcile: { backoff: { initial: "10s", max: "1s" } } })).toEqual([
      "kobun.yaml: reconcile.backoff.initial: expected at most reconcile.backoff.max (1s), got 10s",
    ]);
    const widgets = (backoff: object) => ({ resources: { "widgets.example.com": { reconcile: { backoff } } } });
    expect(problems(widgets({ initial: "5s", max: "1s" }))).toEqual([
      "kobun.yaml: resources.widgets.example.com.reconcile.backoff.initial: expected at most " +
        "resources.widgets.example.com.reconcile.backoff.max (1s), got 5s",
    ]);
    expect(problems({ ...widgets({ initial: "2000s" }) })).toEqual([
      "kobun.yaml: resources.widgets.example.com.reconcile.backoff.initial: expected at most reconcile.backoff.max (16m40s), got 33m20s",
    ]);
    expect(problems({ reconcile: { backoff: { initial: "1s" } }, ...widgets({ max: "500ms" }) })).toEqual([
      "kobun.yaml: resources.widgets.example.com.reconcile.backoff.max: expected at least reconcile.backoff.initial (1s), got 500ms",
    ]);
    const fine = resolveSettings({ file: "kobun.yaml", fileData: { ...widgets({ initial: "1s", max: "1s" }) } });
    expect(fine.resources["widgets.example.com"]!.reconcile).toEqual({ backoff: { initial: 1, max: 1 } });
  });

  test("bad flag values are named by the flag", () => {
    expect(problems({}, { logFormat: "xml", peering: "Not A Name" })).toEqual([
      '--peering: expected a Kubernetes object name (lowercase letters, digits, "-" and "."), got "Not A Name"',
      '--log-format: expected one of "plain", "json", got "xml"',
    ]);
  });

  test("all problems at once, one per line, with the first one's details on the error", () => {
    let caught: ConfigError | undefined;
    try {
      resolveSettings({ file: "kobun.yaml", fileData: { peering: { priority: 1.5 }, workers: { limit: 0, batchWindow: "soon" }, extra: 1 } });
    } catch (error) {
      caught = error as ConfigError;
    }
    expect(caught?.issues.length).toBe(4);
    expect(caught?.message.split("\n").every((line) => line.startsWith("kobun.yaml: "))).toBe(true);
    expect(caught?.file).toBe("kobun.yaml");
    expect(caught?.path).toBe("extra");
    expect(caught?.issues.map((issue) => issue.path)).toEqual(["extra", "peering.priority", "workers.limit", "workers.batchWindow"]);
    expect(caught?.issues[2]?.expected).toBe("an integer from 1 to 100000");
  });
});
