// What `kobun run` loads at start in a compiled operator: none of node:fs, node:path and node:os
// (loading them costs the binary ≈ 1–2 MB of idle RSS for good: bench/idle.ts). The bundle is
// split as build.ts splits it; the chunks the entry, the handler module and run.ts import statically are read for
// imports of those builtins (Bun writes them as bare "fs", "path", "os"). Bytecode aside: it
// is made from the same chunks.

import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUNDLE_OPTIONS, entrySource, KOBUN_ROOT } from "../../../src/cli/project/build.ts";

const work = mkdtempSync(join(tmpdir(), "kobun-run-imports-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

test("the chunks kobun run loads at start import no node:fs, node:path or node:os", async () => {
  const entry = join(work, "entry.ts");
  writeFileSync(entry, entrySource(KOBUN_ROOT, [join(KOBUN_ROOT, "handlers/example.ts")], []));
  const built = await Bun.build({ ...BUNDLE_OPTIONS, bytecode: false, entrypoints: [entry], metafile: true, tsconfig: join(KOBUN_ROOT, "tsconfig.json") });
  expect(built.success).toBe(true);
  const outputs: Record<string, { inputs: Record<string, unknown>; imports: { path: string; kind: string }[] }> = built.metafile!.outputs;
  const text = new Map<string, string>(await Promise.all(built.outputs.map(async (o) => [`./${o.path.split("/").pop()}`, await o.text()] as [string, string])));
  const chunkOf = (input: string) => Object.entries(outputs).find(([, o]) => Object.keys(o.inputs).some((i) => i.endsWith(input)))?.[0];
  const runChunk = chunkOf("src/cli/operator/run.ts");
  const handlersChunk = chunkOf("handlers/example.ts"); // imported with import() ahead of the CLI
  expect(runChunk).toBeDefined();
  expect(handlersChunk).toBeDefined();
  const loaded = new Set<string>();
  const visit = (chunk: string) => {
    if (loaded.has(chunk)) return;
    loaded.add(chunk);
    for (const i of outputs[chunk]!.imports) if (i.kind === "import-statement") visit(i.path.startsWith("./") ? i.path : `./${i.path}`);
  };
  visit("./entry.js");
  visit(runChunk!);
  visit(handlersChunk!);
  const offending = [...loaded].flatMap((chunk) => [...(text.get(chunk) ?? "").matchAll(/from\s*"(?:node:)?(fs|path|os)"/g)].map((m) => `${m[1]} in the chunk of ${Object.keys(outputs[chunk]!.inputs).slice(0, 3).join(", ")}...`));
  expect(offending).toEqual([]);
}, 30_000);
