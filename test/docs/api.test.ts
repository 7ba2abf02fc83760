// docs/api.md is generated from the TSDoc of the public API (test/docs/api.ts): stale, it fails.

import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { apiReference } from "./api.ts";

test("docs/api.md is what test/docs/api.ts generates from src/index.ts's exports (run `bun test/docs/api.ts` after an API change)", async () => {
  const generated = await apiReference();
  expect(generated).toContain("## defineResource");
  expect(generated).toContain("## TemporaryError");
  // The signatures an author reads most: on.* (the On interface) and conditions' functions, not `typeof set`.
  expect(generated).toMatch(/## On\n[\s\S]*create<T extends object = KubeObject>\(resource: Target<T>, fn: HandlerFn<T>/);
  expect(generated).toContain("## HandlerFn");
  expect(generated).not.toContain("set: typeof set");
  expect(readFileSync(join(import.meta.dir, "..", "..", "docs", "api.md"), "utf8")).toBe(generated);
}, 60_000);
