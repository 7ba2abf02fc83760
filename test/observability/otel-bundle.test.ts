// The compiled operator is one ESM bundle: a node module imported statically anywhere in it is
// loaded at every start, before any code runs. The OpenTelemetry SDK's ESM builds import
// node:zlib, node:stream and node:util that way, ≈ 3 MB of idle RSS with tracing off (issue 15).
// observability/otel.ts takes the SDK with require() so they load only when tracing starts.

import { expect, test } from "bun:test";
import { join } from "node:path";

const root = join(import.meta.dir, "../..");

test("the bundled operator loads node:zlib, node:stream and node:util only once tracing starts", async () => {
  const built = await Bun.build({ entrypoints: [join(root, "src/cli.ts")], target: "bun", format: "esm" });
  expect(built.success).toBe(true);
  const bundle = await built.outputs.find((o) => o.kind === "entry-point")!.text();
  const hoisted = new Set([...bundle.matchAll(/^import .* from "(?:node:)?([a-z_/]+)";$/gm)].map((m) => m[1]));
  expect([...hoisted].filter((name) => ["zlib", "stream", "util", "http", "https"].includes(name!))).toEqual([]);
  // The SDK is still in the bundle, behind require() (a CommonJS wrapper, run on first use).
  expect(bundle).toContain("BatchSpanProcessor");
}, 20_000);
