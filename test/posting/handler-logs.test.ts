// posting.logs (issue 30, defect 4): a handler's ctx.logger lines are posted as Events about
// the handled object only when kobun.yaml asks for it, at posting.level or above, message
// only (never the fields), as Kopf's per-object logger posts them. Off by default: outcomes
// and ctx.event posts only. Through kobun/testing: a real sandbox and the operator in-process.

import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Type from "typebox";
import { defineResource, Registry } from "kobun";
import { startOperator, type TestOperator } from "kobun/testing";

const dir = mkdtempSync(join(tmpdir(), "kobun-posting-logs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function chatty() {
  const registry = new Registry();
  const Notes = defineResource({
    group: "posting.kobun.dev", kind: "Note", plural: "notes",
    schema: { spec: Type.Object({ text: Type.String() }), status: Type.Object({}) },
  });
  registry.on.create(Notes, ({ logger, event, body }) => {
    logger.debug("a debug line, below posting.level");
    logger.info("making the note", { token: "s3cr3t-field" });
    logger.child({ step: "check" }).warn("the text is short");
    event.info(body, "Marker", "the handler's own Event");
  }, { id: "create_fn" });
  return { registry, Notes };
}

function configWith(text: string): string {
  const path = join(dir, `kobun-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, text);
  return path;
}

/** The Events about `uid`, once at least `count` exist: the wait is registered before each look. */
async function eventsAbout(kit: TestOperator, uid: string, count: number): Promise<any[]> {
  const events = await kit.client.resolve("v1/events");
  const deadline = performance.now() + 10_000;
  for (;;) {
    const next = kit.sandbox.waitFor((r) => r.plural === "events" && r.verb !== "list" && r.verb !== "watch", 10_000);
    next.catch(() => {});
    const list = await kit.client.list(events, { namespace: kit.namespace });
    const about = list.items.filter((e: any) => e.involvedObject?.uid === uid);
    if (about.length >= count) return about;
    if (performance.now() > deadline) throw new Error(`${about.length} Events about ${uid}, expected ${count}: ${JSON.stringify(about.map((e: any) => e.message))}`);
    await next;
  }
}

test("with posting.logs, a handler's log lines at posting.level or above are posted as Events (message only; Warning for warn)", async () => {
  const { registry, Notes } = chatty();
  const config = configWith("posting:\n  logs: true\n  level: info\n");
  await using kit = await startOperator({ registry, logLevel: "silent", flags: { config } });
  const note = await kit.apply(Notes, { metadata: { name: "logged" }, spec: { text: "hi" } });
  const events = await eventsAbout(kit, note.metadata.uid!, 4); // two log lines, the marker, the outcome
  const logging = events.filter((e) => e.reason === "Logging").map((e) => [e.type, e.message]).sort();
  expect(logging).toEqual([
    ["Normal", "Handler 'create_fn' succeeded."],
    ["Normal", "making the note"],
    ["Warning", "the text is short"],
  ]);
  expect(JSON.stringify(events)).not.toContain("s3cr3t-field");
  expect(JSON.stringify(events)).not.toContain("a debug line");
});

test("by default a handler's log lines are only logged: the Events are the outcome and what ctx.event posts", async () => {
  const { registry, Notes } = chatty();
  await using kit = await startOperator({ registry, logLevel: "silent" });
  const note = await kit.apply(Notes, { metadata: { name: "quiet" }, spec: { text: "hi" } });
  const events = await eventsAbout(kit, note.metadata.uid!, 2);
  // The log lines would have been queued before the marker and the outcome, and sent no later.
  expect(events.map((e) => [e.reason, e.message]).sort()).toEqual([
    ["Logging", "Handler 'create_fn' succeeded."],
    ["Marker", "the handler's own Event"],
  ]);
});
