// Usage errors a first-day user makes: a stray argument to `kobun version`/`kobun docs` is exit 2
// (README: "2: bad usage: unknown command or flag"), not silently ignored; a misspelt `kobun dev`
// flag is matched against dev's own flags too (`--demoo`: did you mean --demo?).

import { afterEach, beforeEach, expect, spyOn, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { dispatch } from "../../src/cli.ts";

const embedded = { handlersLoaded: false, manifests: [] };
let errors: string[];
let outputs: string[];
let spies: { mockRestore(): void }[];
beforeEach(() => {
  errors = [];
  outputs = [];
  spies = [
    spyOn(console, "error").mockImplementation((...args: unknown[]) => void errors.push(args.join(" "))),
    spyOn(console, "log").mockImplementation((...args: unknown[]) => void outputs.push(args.join(" "))),
  ];
});
afterEach(() => spies.forEach((spy) => spy.mockRestore()));

test("kobun version and kobun docs refuse a flag or an argument with exit 2, naming it; alone they print and exit 0", async () => {
  expect(await dispatch(["version", "--json"], embedded)).toBe(2);
  expect(await dispatch(["docs", "handlers"], embedded)).toBe(2);
  expect(errors.join("\n")).toContain("kobun version takes no arguments: unknown flag --json");
  expect(errors.join("\n")).toContain('kobun docs takes no arguments: unexpected argument "handlers"');
  expect(outputs).toEqual([]);
  expect(await dispatch(["version"], embedded)).toBe(0);
  expect(await dispatch(["--version"], embedded)).toBe(0);
  expect(outputs.join("\n")).toMatch(/^kobun \d+\.\d+\.\d+ \(bun /);
});

test("kobun dev: a misspelt dev flag is suggested, an unknown one lists dev's flags with run's; nothing starts", async () => {
  expect(await dispatch(["dev", "--demoo"], embedded)).toBe(2);
  expect(errors.join("\n")).toContain("unknown flag --demoo; did you mean --demo?");
  errors.length = 0;
  expect(await dispatch(["dev", "--xyzzy"], embedded)).toBe(2);
  expect(errors.join("\n")).toContain("known flags: --demo, --once, --watch, --config,");
  expect(errors.join("\n")).not.toContain("--worker");
});

test("a handler path that does not exist is a usage error naming it (exit 2), for run, dev and manifests alike", async () => {
  for (const command of ["run", "dev", "manifests"]) {
    errors.length = 0;
    const flags = command === "run" ? ["--kubeconfig", "/nonexistent/kubeconfig"] : [];
    expect(await dispatch([command, "no-such-handlers.ts", ...flags], embedded)).toBe(2);
    expect(errors.join("\n")).toContain("kobun: handler path no-such-handlers.ts does not exist");
    expect(errors.join("\n")).not.toContain("crashed");
  }
});

test("a compiled operator refuses kobun docs as it does init, build and test (exit 2): it carries no guides", async () => {
  expect(await dispatch(["docs"], { handlersLoaded: true, manifests: [] })).toBe(2);
  expect(errors.join("\n")).toContain("kobun docs runs from the kobun package (npx kobun docs), not from a compiled operator");
  expect(outputs).toEqual([]);
});

test("kobun generate types: a --crd that cannot be read and an --out that cannot be written are usage errors naming them", async () => {
  const crd = new URL("../../handlers/kobunexample.crd.yaml", import.meta.url).pathname;
  expect(await dispatch(["generate", "types", "--crd", "/no/such/crd.yaml"], embedded)).toBe(2);
  expect(await dispatch(["generate", "types", "--crd", new URL("../../handlers", import.meta.url).pathname], embedded)).toBe(2);
  expect(await dispatch(["generate", "types", "--crd", crd, "--out", "/no/such/dir/types.ts"], embedded)).toBe(2);
  const said = errors.join("\n");
  expect(said).toContain("kobun: --crd /no/such/crd.yaml: no such file or directory");
  expect(said).toMatch(/kobun: --crd \S+\/handlers: a directory, not a file/);
  expect(said).toContain("kobun: --out /no/such/dir/types.ts: no such file or directory");
  expect(said).not.toContain("crashed");
});

test("kobun help COMMAND prints that command's help, as kobun COMMAND --help does; an unknown one is exit 2", async () => {
  expect(await dispatch(["help", "run"], embedded)).toBe(0);
  expect(outputs.join("\n")).toStartWith("Usage: kobun run [flags] [handler files...]");
  outputs.length = 0;
  expect(await dispatch(["help"], embedded)).toBe(0);
  expect(outputs.join("\n")).toStartWith("kobun ");
  expect(await dispatch(["help", "bogus"], embedded)).toBe(2);
  expect(errors.join("\n")).toContain('unknown command "bogus"');
});

test("a compiled operator refuses handler paths (exit 2) for run, dev and manifests: it runs the handlers it was built with", async () => {
  const compiled = { handlersLoaded: true, manifests: [] };
  expect(await dispatch(["run", "/nonexistent/handlers", "--standalone"], compiled)).toBe(2);
  expect(await dispatch(["manifests", "./handlers"], compiled)).toBe(2);
  expect(await dispatch(["dev", "handlers/"], { ...compiled, sandbox: true })).toBe(2); // built --with-sandbox
  const said = errors.join("\n");
  expect(said).toContain("this operator was built with its handlers: handler paths (/nonexistent/handlers) are read only");
  expect(said).toContain("(npx kobun run PATHS)");
  expect(said).toContain("handler paths (./handlers) are read only when kobun runs from the project (npx kobun manifests PATHS)");
  expect(said).toContain("handler paths (handlers/) are read only when kobun runs from the project (npx kobun dev PATHS)");
  expect(outputs).toEqual([]);
});

test("kobun generate types reads --crd as every other flag: --crd=FILE, repeated, and a --crd with no value is exit 2", async () => {
  const crd = new URL("../../handlers/kobunexample.crd.yaml", import.meta.url).pathname;
  const out = join(mkdtempSync(join(tmpdir(), "kobun-generate-")), "types.ts");
  expect(await dispatch(["generate", "types", `--crd=${crd}`, `--out=${out}`], embedded)).toBe(0);   // was: unknown flag --crd
  expect(readFileSync(out, "utf8")).toContain("export interface KobunExample");
  rmSync(dirname(out), { recursive: true });
  expect(await dispatch(["generate", "types", "--crd", crd, "--crd"], embedded)).toBe(2);   // was: the second ignored
  expect(await dispatch(["generate", "types", crd], embedded)).toBe(2);
  expect(await dispatch(["generate"], embedded)).toBe(2);
  const said = errors.join("\n");
  expect(said).toContain("--crd needs a value");
  expect(said).toContain(`kobun generate types: unexpected argument ${JSON.stringify(crd)}; name a CRD file with --crd FILE`);
  expect(said).toContain('kobun generate needs what to generate: kobun generate types --crd FILE');
  expect(said).not.toContain('unknown target ""');
});

test("kobun version --help (and kobun help version) print its usage and exit 0, as every other command's --help", async () => {
  expect(await dispatch(["version", "--help"], embedded)).toBe(0);
  expect(await dispatch(["help", "version"], embedded)).toBe(0);
  expect(errors).toEqual([]);
  expect(outputs.join("\n")).toContain("Usage: kobun version");
});
