// kobun.example.yaml at the repository root is generated from the schema: it must equal
// renderExampleConfig() and load back to exactly the defaults.

import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfigFile, parseConfigText, renderExampleConfig, resolveSettings, SETTINGS_SCHEMA } from "../../src/config/index.ts";

const EXAMPLE = join(import.meta.dir, "..", "..", "kobun.example.yaml");

test("kobun.example.yaml on disk equals renderExampleConfig() (regenerate it if the schema changed)", () => {
  expect(readFileSync(EXAMPLE, "utf8")).toBe(renderExampleConfig());
});

test("kobun.example.yaml loads back to the defaults", () => {
  expect(resolveSettings({ file: EXAMPLE })).toEqual(resolveSettings({}));
});

test("kobun.example.yaml mentions every key of the schema", () => {
  const data = loadConfigFile(EXAMPLE) as Record<string, Record<string, unknown>>;
  expect(Object.keys(data)).toEqual([...Object.keys(SETTINGS_SCHEMA.fields), "resources"]);
  for (const [name, section] of Object.entries(SETTINGS_SCHEMA.fields)) {
    expect(Object.keys(data[name] ?? {})).toEqual(Object.keys(section.fields));
  }
});

test("kobun.example.yaml's resources entry, uncommented, reads back as its example values", () => {
  const text = readFileSync(EXAMPLE, "utf8");
  const section = text.slice(text.indexOf("resources: {}"));
  const entry = section.split("\n").slice(1).filter((line) => line.startsWith("#  ") && !/^#\s+#/.test(line)).map((line) => line.slice(1));
  const settings = resolveSettings({ fileData: parseConfigText(`resources:\n${entry.join("\n")}\n`, "example") });
  expect(settings.resources["kobunexamples.kobun.dev"]).toMatchObject({
    labelSelector: "app=web,tier in (frontend,backend)", fieldSelector: "metadata.name!=skip-me", version: "v1beta1",
    namespaces: { include: ["team-*"], exclude: ["team-legacy"] }, workers: { limit: 100, batchWindow: 0.1 }, storage: "auto",
  });
});
