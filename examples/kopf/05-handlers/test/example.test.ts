import { expect, test } from "bun:test";
import { sampleObject } from "../../kopf.ts";
import { examplesPath, request, runOperator, sandboxWithCrd } from "../../testing.ts";
import { journal, registry } from "../handlers/example.ts";

test("05-handlers: create, update, field, resume after a restart, delete, in registration order", async () => {
  await using sandbox = { ...(await sandboxWithCrd()), async [Symbol.asyncDispose]() { await this.stop(); } };
  journal.clear();
  const first = await runOperator(sandbox, registry);
  try {
    await request(sandbox, "POST", examplesPath(), { apiVersion: "kopf.dev/v1", kind: "KopfExample", ...sampleObject() });
    // A field handler runs on the creation too (old undefined), as Kopf's does (old None).
    await journal.until((lines) => lines.length === 3);
    expect(journal.lines).toEqual(["CREATED 1st", "CREATED 2nd", "FIELD CHANGED: undefined -> value"]);

    journal.clear();
    await request(sandbox, "PATCH", examplesPath("kopf-example-1"), { spec: { field: "changed" } });
    await journal.until((lines) => lines.length === 2);
    expect([...journal.lines].sort()).toEqual(["FIELD CHANGED: value -> changed", "UPDATED change spec.field"]);
  } finally {
    await first.stop();
  }

  // Another operator process sees the object again: the resume handlers run, once each.
  journal.clear();
  const second = await runOperator(sandbox, registry);
  try {
    await journal.has("RESUMED 2nd");
    expect(journal.lines).toEqual(["RESUMED 1st", "RESUMED 2nd"]);

    journal.clear();
    await request(sandbox, "DELETE", examplesPath("kopf-example-1"));
    await journal.has("DELETED 2nd");
    expect(journal.lines).toEqual(["DELETED 1st", "DELETED 2nd"]);
  } finally {
    await second.stop();
  }
}, 20_000);
