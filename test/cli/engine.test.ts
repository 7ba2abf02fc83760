// The compiled binary's `run` starts with JavaScriptCore's FTL tier off (cli/engine.ts): what
// it execs with, and that the generated entry loads that module before any other. The exec
// itself, in the binary: test/e2e/engine.e2e.ts.

import { expect, test } from "bun:test";
import { entrySource } from "../../src/cli/build.ts";
import { ENGINE_OPTIONS, engineEnv } from "../../src/cli/engine.ts";

test("run without the engine's options: exec'd with them added, every other variable kept", () => {
  const env = engineEnv(["run", "-n", "default"], { PATH: "/usr/bin", HOME: "/home/op", EMPTY: "" });
  expect(env).toEqual({ PATH: "/usr/bin", HOME: "/home/op", EMPTY: "", ...ENGINE_OPTIONS });
  expect(ENGINE_OPTIONS).toEqual({ BUN_JSC_useFTLJIT: "0" });
});

test("a value the user gives is kept: no exec (BUN_JSC_useFTLJIT=1 brings FTL back)", () => {
  expect(engineEnv(["run"], { BUN_JSC_useFTLJIT: "1" })).toBeUndefined();
  // after the exec the options are there: it never execs twice
  expect(engineEnv(["run"], { ...ENGINE_OPTIONS })).toBeUndefined();
});

test("other commands and run --help go on as they are (a one-shot command would pay a second start for nothing)", () => {
  for (const args of [[], ["version"], ["manifests", "-n", "x"], ["dev"], ["run", "--help"], ["run", "-h"]]) expect(engineEnv(args, {})).toBeUndefined();
});

test("the binary's generated entry imports the engine's start before the command line and the handlers", () => {
  const source = entrySource("/k", ["/p/handlers/a.ts"], []);
  const imports = source.split("\n").filter((line) => line.startsWith("import "));
  expect(imports[0]).toBe('import "/k/src/cli/engine-start.ts";');
  expect(imports.slice(1)).toEqual(['import { main } from "/k/src/cli.ts";', 'import "/p/handlers/a.ts";']);
});
