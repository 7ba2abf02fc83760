// A log line never fails what writes it: a field JSON cannot hold (a bigint, an object that refers
// to itself, a toJSON that throws) is written as text, in both formats, instead of throwing out of
// ctx.logger into the handler (which then failed, and was retried, for a log line).

import { expect, test } from "bun:test";
import { Logger, memorySink, Registry, resource } from "../../src/index.ts";
import { startOperator } from "../../src/testing/index.ts";

const cycle = (): Record<string, unknown> => {
  const o: Record<string, unknown> = { a: 1 };
  o.self = o;
  return o;
};
const throwing = { toJSON: () => { throw new Error("no JSON for you"); } };

test("a handler that logs a bigint field succeeds, and its line has the number", async () => {
  const registry = new Registry();
  registry.on.create(resource.configmaps, ({ logger }) => {
    logger.info("sized", { bytes: 1n << 40n });
    return { ok: true };
  }, { id: "size", retries: 1 });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 10_000 });
  await kit.apply(resource.configmaps, { metadata: { name: "c" }, data: {} });
  expect(await kit.logs.until(/sized|failed/)).toContain("sized resource=configmaps");
  expect(await kit.logs.until(/sized/)).toContain("bytes=1099511627776");
  await kit.logs.until("Handler 'size' succeeded.");
}, 20_000);

test("plain: fields JSON cannot hold are written as text", () => {
  const sink = memorySink("debug", "plain");
  new Logger(sink).info("odd", { big: 12n, loop: cycle(), bad: throwing, list: [1n] });
  expect(sink.lines[0]).toEndWith(' INFO  odd big=12 loop="[object Object]" bad="[object Object]" list="[\\"1\\"]"');
});

test("json: one JSON object per line, the unserializable fields as text", () => {
  const sink = memorySink("debug", "json");
  new Logger(sink).warn("odd", { big: 12n, loop: cycle(), bad: throwing, fine: { x: [1, "y"] } });
  const line = JSON.parse(sink.lines[0]!);
  expect(line).toMatchObject({ level: "warn", msg: "odd", big: "12", fine: { x: [1, "y"] } });
  expect(typeof line.loop).toBe("string");
  expect(typeof line.bad).toBe("string");
});
