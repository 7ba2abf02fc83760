// docs/testing.md, "The faults" and "The corpus: stale reads and stale status", as an author
// meets them with operators of their own: an intermediate state never seen (an edge-triggered
// Kopf-style update handler), a child made twice from a stale index (a reconcile), and a status
// written back whole from a stale copy (a reconcile woken by a child). simulate() finds each
// with its defaults, shrunk to the one merge that shows it, and passes each fix.

import { describe, expect, test } from "bun:test";
import { adopt, type Index, Registry, resource } from "kobun";
import { simulate, type World } from "kobun/testing";
import { configMap, failureOf, Gadgets } from "./helpers.ts";

const merged = (plural: string) => [expect.objectContaining({ kind: "merge", plural })];

describe("a lost intermediate event: an update handler that acts on Pending → Running only", () => {
  function operator(fixed: boolean): Registry {
    const registry = new Registry();
    registry.on.update(Gadgets, ({ old, new: now, body, patch }) => {
      const started = fixed
        ? now?.spec?.phase !== "Pending" && body.status?.note !== "started"   // level: any phase past Pending
        : old?.spec?.phase === "Pending" && now?.spec?.phase === "Running";   // edge: that transition only
      if (started) patch.status.note = "started";
    }, { id: "started" });
    // Level-triggered means from any first sight too: a Gadget first seen past Pending (made so, or
    // deleted and made again under its name while the operator worked: the recreate fault) started.
    if (fixed) {
      registry.on.create(Gadgets, ({ spec, patch }) => {
        if (spec.phase !== "Pending") patch.status.note = "started";
      }, { id: "seen-started" });
    }
    return registry;
  }
  const scenario = async (world: World) => {
    for (const phase of ["Pending", "Running", "Done"]) {
      await world.apply(Gadgets, { metadata: { name: "g1" }, spec: { phase } });
    }
  };

  test("buggy: found by a merge of the Gadget's events, the note missing", async () => {
    const { failure, shrunk, report } = await failureOf(simulate({ registry: operator(false), scenario }));
    expect(shrunk, report).toEqual(merged("gadgets"));
    expect(report).toMatch(/ {2}- events of gadgets merged over steps [12]-[23] \(only the latest state seen\)/);
    expect(failure.check).toBe("convergence");
    expect(failure.details).toEqual([`~ gadgets default/g1: status.note: "started" in the reference, absent here`]);
  }, 60_000);

  test("fixed: decided from the whole state, it passes every schedule", async () => {
    const result = await simulate({ registry: operator(true), scenario });
    expect(result.runs.length).toBe(16);
    expect(result.runs.some((run) => run.faults.some((fault) => fault.kind === "merge"))).toBe(true);
  }, 60_000);
});

describe("a duplicate child: a reconcile that looks its child up in an index", () => {
  function operator(fixed: boolean): Registry {
    const registry = new Registry();
    registry.on.index(resource.configmaps, ({ body }) => {
      const owner = body.metadata.ownerReferences?.[0]?.uid;
      return owner ? { [owner as string]: body.metadata.name as string } : undefined;
    }, { id: "childrenByOwner" });
    registry.on.reconcile(Gadgets, async ({ name, body, spec, api, indexes }) => {
      const data = { size: String(spec.size) };
      if (fixed) {
        await api.apply(adopt(configMap(`${name}-data`, data), { owner: body }));
        return;
      }
      const known = (indexes.childrenByOwner as Index<string, string>).get(body.metadata.uid!);
      for (const child of known) await api.patch(resource.configmaps, child, { data });
      if (known.length === 0) {
        const generated = { ...configMap("", data), metadata: { generateName: `${name}-data-` } };
        await api.create(adopt(generated, { owner: body }));
      }
    });
    return registry;
  }
  const scenario = async (world: World) => {
    await world.apply(Gadgets, { metadata: { name: "g1" }, spec: { size: 1 } });
    await world.apply(Gadgets, { metadata: { name: "g1" }, spec: { size: 2 } });
  };

  test("buggy: the index lags a step, the reconcile makes a second child", async () => {
    const { failure, shrunk, report } = await failureOf(simulate({ registry: operator(false), scenario }));
    expect(shrunk, report).toEqual(merged("configmaps"));
    expect(failure.check).toBe("convergence");
    expect(failure.details).toContain("~ configmaps default/g1-data-*: 2 objects where the reference has 1");
  }, 60_000);

  test("fixed: a named child written with api.apply, one whatever the index shows", async () => {
    await simulate({ registry: operator(true), scenario });
  }, 60_000);
});

describe("a status from a stale read: a reconcile writes back the whole status of its copy", () => {
  // The reconcile is woken by the Gadget's settings ConfigMap, which the scenario makes (as a user
  // would) and links to its Gadget by a label that `watches` follows, or by a controller
  // ownerReference that `owns` follows.
  function operator(fixed: boolean, link: "label" | "owner" = "label"): Registry {
    const registry = new Registry();
    const wake = link === "owner" ? { owns: [resource.configmaps] } : {
      watches: [{ resource: resource.configmaps, map: (c: { metadata: { labels?: Record<string, string> } }) => {
        const gadget = c.metadata.labels?.gadget;
        return gadget ? { name: gadget } : null;
      } }],
    };
    registry.on.reconcile(Gadgets, async ({ name, body, api, cache, patch }) => {
      if (!cache.get(resource.configmaps, `${name}-settings`)) return;
      if (fixed) {
        patch.status.phase = "Configured";                    // its own field only, merged by kobun
        return;
      }
      const status = { ...body.status, phase: "Configured" };  // a read-modify-write of the copy it was given
      const replace = [{ op: "add", path: "/status", value: status }];
      await api.patch(Gadgets, name, replace, { type: "json", subresource: "status" });
    }, wake);
    return registry;
  }
  const scenario = (link: "label" | "owner") => async (world: World) => {
    await world.apply(Gadgets, { metadata: { name: "g1" }, spec: { size: 1 } });
    await world.patchStatus(Gadgets, "g1", { ready: true });       // as another controller would
    const { apiVersion, kind, metadata } = (await world.get(Gadgets, "g1"))!;   // no step
    const owner = { apiVersion, kind, name: "g1", uid: metadata.uid!, controller: true };
    const linked = link === "owner" ? { ownerReferences: [owner] } : { labels: { gadget: "g1" } };
    await world.apply(resource.configmaps, { metadata: { name: "g1-settings", ...linked }, data: {} });
  };

  test("buggy: woken by its child with a stale copy, it wipes another controller's status.ready", async () => {
    const { failure, shrunk, report } = await failureOf(simulate({ registry: operator(false), scenario: scenario("label") }));
    expect(shrunk, report).toEqual(merged("gadgets"));
    expect(report).toContain("  step 2: patch the status of gadgets g1: {\"ready\":true}");
    expect(failure.details).toEqual(["~ gadgets default/g1: status.ready: true in the reference, absent here"]);
  }, 60_000);

  test("fixed: ctx.patch.status sets its own field and leaves the rest", async () => {
    await simulate({ registry: operator(true), scenario: scenario("label") });
  }, 60_000);

  // docs/testing.md, the recreate fault: a scenario object owned by the one recreated goes with it
  // (the garbage collector), and no operator can make it again
  test("a scenario's ConfigMap owned by the recreated Gadget is collected with it: missing, whatever the operator", async () => {
    const recreate = { kind: "recreate" as const, after: { verb: "patch", plural: "gadgets", subresource: "status", name: "g1", nth: 1 } };
    const { failure } = await failureOf(simulate({ registry: operator(true, "owner"), scenario: scenario("owner"), schedule: [recreate] }));
    expect(failure.details).toContain("- configmaps default/g1-settings: missing (the reference run has it)");
  }, 60_000);
});
