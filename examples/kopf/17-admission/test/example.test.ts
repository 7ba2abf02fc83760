import { expect, test } from "bun:test";
import { KopfExamples, sampleObject, type KopfExample } from "../../kopf.ts";
import { examplesPath, startExample } from "../../testing.ts";
import { registry } from "../handlers/example.ts";

/** A request as kubectl sends it, answered by the sandbox after calling the operator's webhooks. */
async function send(url: string, method: string, path: string, body: unknown) {
  const type = method === "PATCH" ? "application/merge-patch+json" : "application/json";
  const response = await fetch(`${url}${path}`, { method, headers: { "content-type": type }, body: JSON.stringify(body) });
  const json = await response.json() as KopfExample & { message?: string };
  return { code: response.status, body: json, warnings: response.headers.get("warning") ?? "" };
}

const object = (name: string, field: string) => {
  const sample = sampleObject(name);
  return { apiVersion: "kopf.dev/v1", kind: "KopfExample", ...sample, spec: { ...sample.spec, field } };
};

test("17-admission: the operator's webhooks validate, refuse and mutate what is written", async () => {
  await using kit = await startExample(registry, { flags: { webhooksUrl: "https://127.0.0.1:0" } });
  const url = kit.sandbox.url;

  const made = await send(url, "POST", examplesPath(), object("fine", "value"));
  expect(made.code).toBe(201);
  expect(made.body.spec.injected).toBe(123); // the mutator, for an object with somelabel=somevalue
  expect(made.warnings).toContain("Accessing as user:");
  expect(made.warnings).toContain("Also update status.field to match spec.field");

  const wrong = await send(url, "POST", examplesPath(), object("wrong", "wrong"));
  expect(wrong.code).toBe(400);
  expect(wrong.body.message).toContain("Meh! I don't like it. Change the field.");
  const dry = await send(url, "POST", `${examplesPath()}?dryRun=All`, object("wrong", "wrong"));
  expect(dry.code).toBe(201); // a dry run is let through
  expect(await kit.get(KopfExamples, "wrong")).toBeUndefined();

  const lazy = await send(url, "POST", examplesPath(), object("lazy", "not-allowed"));
  expect(lazy.code).toBe(555);
  expect(lazy.body.message).toContain("I'm too lazy anyway. Go away!");

  const status = `${examplesPath("fine")}/status`;
  const mismatch = await send(url, "PATCH", status, { status: { field: "other" } });
  expect(mismatch.code).toBe(400);
  expect(mismatch.body.message).toContain("status.field MUST be equal to spec.field!");
  const match = await send(url, "PATCH", status, { status: { field: "value" } });
  expect(match.code).toBe(200);
});
