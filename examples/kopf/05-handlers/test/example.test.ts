import { expect, test } from "bun:test";
import { memorySink, type MemorySink } from "kobun";
import { sampleObject } from "../../kopf.ts";
import { examplesPath, jsonLine, records, request, runOperator, sandboxWithCrd } from "../../testing.ts";
import { registry } from "../handlers/example.ts";

/** What the handlers logged (their lines carry `handler=`), from line `from` on. */
const said = (logs: MemorySink, from = 0) =>
  records(logs).slice(from).filter((r) => r.handler !== undefined && !/^Handler '/.test(r.msg)).map((r) => r.msg);

test("05-handlers: create, update, field, resume after a restart, delete, in registration order", async () => {
  await using sandbox = { ...(await sandboxWithCrd()), async [Symbol.asyncDispose]() { await this.stop(); } };
  const firstLogs = memorySink("info", "json");
  const first = await runOperator(sandbox, registry, { logs: firstLogs });
  try {
    await request(sandbox, "POST", examplesPath(), { apiVersion: "kopf.dev/v1", kind: "KopfExample", ...sampleObject() });
    // A field handler runs on the creation too (old undefined), as Kopf's does (old None).
    await firstLogs.until(jsonLine("Handler 'field_fn' succeeded."));
    expect(said(firstLogs)).toEqual(["CREATED 1st", "CREATED 2nd", "FIELD CHANGED: undefined -> value"]);

    const from = firstLogs.lines.length;
    await request(sandbox, "PATCH", examplesPath("kopf-example-1"), { spec: { field: "changed" } });
    await firstLogs.until(jsonLine("FIELD CHANGED: value -> changed"));
    await firstLogs.until(jsonLine("UPDATED change spec.field"));
    expect(said(firstLogs, from).sort()).toEqual(["FIELD CHANGED: value -> changed", "UPDATED change spec.field"]);
  } finally {
    await first.stop();
  }

  // Another operator process sees the object again: the resume handlers run, once each.
  const secondLogs = memorySink("info", "json");
  const second = await runOperator(sandbox, registry, { logs: secondLogs });
  try {
    await secondLogs.until(jsonLine("Handler 'resume_fn_2' succeeded."));
    expect(said(secondLogs)).toEqual(["RESUMED 1st", "RESUMED 2nd"]);

    const from = secondLogs.lines.length;
    await request(sandbox, "DELETE", examplesPath("kopf-example-1"));
    await secondLogs.until(jsonLine("Handler 'delete_fn_2' succeeded."));
    expect(said(secondLogs, from)).toEqual(["DELETED 1st", "DELETED 2nd"]);
  } finally {
    await second.stop();
  }
}, 20_000);
