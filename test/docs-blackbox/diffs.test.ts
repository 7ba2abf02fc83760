// The README's "Secrets, sensitive fields and large objects": a Secret's data and a field marked
// `sensitive` are kept as a digest (their diff item says `unknown: "sensitive"`, no values), and a
// state over handling.diffBaseLimit is one digest (the next update has diffUnavailable, old undefined).

import { expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Type from "typebox";
import { defineResource, Registry } from "kobun";
import { startOperator } from "kobun/testing";
import { scratchDir } from "./helpers.ts";

test("sensitive fields and Secret data are digests with `unknown: \"sensitive\"`; a state over the limit is `too-large`", async () => {
  const Databases = defineResource({
    group: "blackbox.kobun.dev", kind: "Database", plural: "databases",
    schema: {
      spec: Type.Object({ password: Type.String(), blob: Type.Optional(Type.String()) }),
      status: Type.Record(Type.String(), Type.Unknown()),
    },
  });
  const registry = new Registry();
  const secretDiffs: unknown[] = [];
  const updates: { diff: unknown; unavailable: boolean; old: boolean }[] = [];
  registry.on.update("v1/secrets", ({ diff, patch }) => {
    secretDiffs.push(diff);
    patch.metadata.labels = { rotated: String(secretDiffs.length) };
  }, { id: "rotate_fn" });
  registry.on.create(Databases, () => ({ ok: true }), { id: "provision_fn", sensitive: ["spec.password"] });
  registry.on.update(Databases, ({ diff, diffUnavailable, old }) => {
    updates.push({ diff, unavailable: diffUnavailable, old: old !== undefined });
    return { n: updates.length };
  }, { id: "upd" });
  const dir = scratchDir();
  const updated = (n: number) => (o: { status?: Record<string, unknown> }) => (o.status?.upd as { n: number } | undefined)?.n === n;
  try {
    writeFileSync(join(dir, "kobun.yaml"), "handling: { diffBaseLimit: 2000 }\n");
    await using kit = await startOperator({ registry, logLevel: "silent", flags: { config: join(dir, "kobun.yaml") }, timeout: 15_000 });
    await kit.apply("v1/secrets", { metadata: { name: "s" }, type: "Opaque", data: { pw: btoa("one") } });
    const stored = await kit.until("v1/secrets", "s", (o) => o.metadata.annotations?.["kobun.dev/last-handled-configuration"]);
    expect(stored.metadata.annotations?.["kobun.dev/last-handled-configuration"]).not.toContain(btoa("one"));
    await kit.apply("v1/secrets", { metadata: { name: "s" }, type: "Opaque", data: { pw: btoa("two") } });
    await kit.until("v1/secrets", "s", (o) => o.metadata.labels?.rotated === "1");
    expect(secretDiffs).toEqual([[{ op: "change", path: ["data"], unknown: "sensitive" }]]);

    await kit.apply(Databases, { metadata: { name: "d" }, spec: { password: "p1" } });
    const created = await kit.until(Databases, "d", (o) => o.status?.provision_fn);
    expect(JSON.stringify(created.status?.kobun)).not.toContain("p1");
    await kit.apply(Databases, { metadata: { name: "d" }, spec: { password: "p2" } });
    await kit.until(Databases, "d", updated(1));
    await kit.apply(Databases, { metadata: { name: "d" }, spec: { password: "p2", blob: "x".repeat(3000) } });
    await kit.until(Databases, "d", updated(2));
    await kit.apply(Databases, { metadata: { name: "d" }, spec: { password: "p2", blob: "y".repeat(3000) } });
    await kit.until(Databases, "d", updated(3));
    expect(updates[0]).toEqual({ diff: [{ op: "change", path: ["spec", "password"], unknown: "sensitive" }], unavailable: false, old: true });
    expect(updates[2]).toEqual({ diff: [{ op: "change", path: [], unknown: "too-large" }], unavailable: true, old: false });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);
