// `npm start` is `kobun dev --demo`: the example operator against the embedded sandbox.
// `--once` ends it after the walk-through, so the main job itself is tested end to end.

import { expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const repo = join(import.meta.dir, "../../..");

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
  const project = join(repo, ".tmp/cli-dev", `project-${process.pid}`);
  mkdirSync(join(project, "handlers"), { recursive: true });
  try {
    writeFileSync(join(project, "handlers/gizmos.ts"), `import { defineResource, on } from "kobun";
import Type from "typebox";
const Gizmos = defineResource({ group: "dev.kobun.dev", kind: "Gizmo", plural: "gizmos",
  schema: { spec: Type.Object({}, { additionalProperties: true }), status: Type.Object({}) } });
on.event(Gizmos, ({ type, name, logger }) => logger.info(\`gizmo \${name} \${type}\`), { id: "seen" });
`);
    writeFileSync(join(project, "handlers/gizmo.sample.yaml"),
      "apiVersion: dev.kobun.dev/v1\nkind: Gizmo\nmetadata: { name: g, namespace: default }\nspec: {}\n");
    const child = Bun.spawn([process.execPath, join(repo, "src/cli.ts"), "dev", "--once"], {
      cwd: project, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" }, stdout: "pipe", stderr: "pipe",
    });
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
