// `npm start` is `kobun dev --demo`: the example operator against the embedded sandbox.
// `--once` ends it after the walk-through, so the main job itself is tested end to end.

import { expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const repo = join(import.meta.dir, "../../..");

/** A project of one kind, dev.kobun.dev/v1 `kind`, its handler module (`body`, after the resource `token`) and one sample. */
function kindProject(name: string, kind: string, body: string): string {
  const project = join(repo, ".tmp/cli-dev", `${name}-${process.pid}`);
  const plural = `${kind.toLowerCase()}s`;
  mkdirSync(join(project, "handlers"), { recursive: true });
  writeFileSync(join(project, `handlers/${plural}.ts`), `import { defineResource, on } from "kobun";
import Type from "typebox";
const token = defineResource({ group: "dev.kobun.dev", kind: ${JSON.stringify(kind)}, plural: ${JSON.stringify(plural)},
  schema: { spec: Type.Object({}, { additionalProperties: true }), status: Type.Object({}, { additionalProperties: true }) } });
${body}
`);
  writeFileSync(join(project, `handlers/${plural}.sample.yaml`),
    `apiVersion: dev.kobun.dev/v1\nkind: ${kind}\nmetadata: { name: ${kind[0]!.toLowerCase()}, namespace: default }\nspec: {}\n`);
  return project;
}

const devOnce = (cwd: string) => Bun.spawn([process.execPath, join(repo, "src/cli.ts"), "dev", "--once"], {
  cwd, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" }, stdout: "pipe", stderr: "pipe",
});

test("kobun dev --demo --once: the sample is created, updated and deleted, each step handled", async () => {
  const child = Bun.spawn([process.execPath, join(repo, "src/cli.ts"), "dev", "--demo", "--once"], {
    cwd: repo, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" }, stdout: "pipe", stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  expect({ code, err: code === 0 ? "" : err }).toEqual({ code: 0, err: "" });
  expect(out).toMatch(/kubectl --kubeconfig \S+kubeconfig\.yaml/);
  expect(out).toContain('demo: created KobunExample/kobun-demo: status={"greeting":"hello kobun-demo","create_fn":{"message":"hello kobun-demo"}');
  expect(out).toMatch(/demo: updated KobunExample\/kobun-demo: .*"update_fn":\{"changed":\["spec\.demo"\]\}/);
  expect(out).toContain("demo: deleted KobunExample/kobun-demo: gone (finalizer released)");
  expect(err).toContain("Handler 'delete_fn' succeeded.");
  // `npm start`'s first lines: its own sandbox is all there is to watch, so no "pass -n NS or -A" warning.
  expect(err).not.toContain("no namespaces given");
  // Its own sandbox speaks HTTP/1.1 only: dev asks for that at once, rather than finding out and saying so.
  expect(out + err).not.toContain("did not select HTTP/2");
}, 30_000);

test("kobun dev --dev peers at priority 666 (Kopf's --dev): the sandbox serves the peering CRDs, the operator joins", async () => {
  const child = Bun.spawn([process.execPath, join(repo, "src/cli.ts"), "dev", "--dev", "--once", "-v"], {
    cwd: repo, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" }, stdout: "pipe", stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  expect({ code, err: code === 0 ? "" : err }).toEqual({ code: 0, err: "" });
  const logs = out + err;
  expect(logs).toMatch(/installed="[^"]*clusterkobunpeerings\.kobun\.dev,kobunpeerings\.kobun\.dev"/);
  expect(logs).toContain("created the peering object");
  expect(logs).not.toContain("peering is not in use");
  // Without --dev, kobun dev stays standalone: nothing to peer with.
  const plain = Bun.spawn([process.execPath, join(repo, "src/cli.ts"), "dev", "--once", "-v"], {
    cwd: repo, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" }, stdout: "pipe", stderr: "pipe",
  });
  const [plainOut, plainErr] = await Promise.all([new Response(plain.stdout).text(), new Response(plain.stderr).text(), plain.exited]);
  expect(plainOut + plainErr).not.toContain("peering");
}, 60_000);

// A sample of an operator that waits for nothing (here on.event alone) was made, changed and deleted
// before the operator's first LIST: found as listed, or never seen. The demo now starts once it listed.
test("kobun dev --once starts the demo once the operator has listed: its sample arrives as added", async () => {
  const project = kindProject("project", "Gizmo",
    "on.event(token, ({ type, name, logger }) => logger.info(`gizmo ${name} ${type}`), { id: \"seen\" });");
  try {
    const child = devOnce(project);
    const [out, err, code] = await Promise.all([
      new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited,
    ]);
    expect({ code, err: code === 0 ? "" : err }).toEqual({ code: 0, err: "" });
    // Seen as a change, not as found by the LIST (was "gizmo g listed", or nothing at all). The demo changes and
    // deletes it without waiting (on.event writes nothing to wait for): on a loaded machine the object's events
    // can merge in the batch window, latest first, so the one seen may be its update or its deletion.
    expect(out + err).toMatch(/gizmo g (added|modified|deleted)/);
    expect(out + err).not.toContain("gizmo g listed");
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}, 30_000);

// Ctrl+C during the demo is a clean stop (README: exit 0 on SIGINT/SIGTERM), not a failed demo: it
// exited 5 with "ERROR demo failed ... the sample ... was refused: received SIGINT".
test("kobun dev --once stopped by SIGINT or SIGTERM while the demo waits: exit 0, no demo failure", async () => {
  // The create handler holds until its signal aborts: the demo waits on it when the signal comes.
  const project = kindProject("held", "Held", `on.create(token, ({ signal, logger }) => new Promise<void>((resolve) => {
  logger.info("holding the demo");
  signal.addEventListener("abort", () => resolve(), { once: true });
}), { id: "hold" });`);
  try {
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      const child = devOnce(project);
      let seen = "";
      const decoder = new TextDecoder();
      const reader = child.stderr.getReader();
      while (!seen.includes("holding the demo")) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += decoder.decode(value);
      }
      child.kill(signal);
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) seen += decoder.decode(chunk.value);
      const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
      expect({ signal, code, failed: (out + seen).match(/.*demo failed.*/)?.[0] }).toEqual({ signal, code: 0, failed: undefined });
    }
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}, 60_000);
