// The cost figure of issue 34: a scenario of ten Widgets and an operator making one ConfigMap
// child per Widget, run under `schedules` fault schedules. Two shapes: the ten applied in one step
// (`kubectl apply -f` of a file of ten: one settle), or in ten steps (ten settles). Run it as
// `bun test/simulation/cost.ts [schedules] [ten]` (default 200 schedules, one step): it prints the figures.

import { adopt, ApiError, Registry } from "kobun";
import { simulate, type SimulationResult, type World } from "kobun/testing";
import { Widgets, configMap } from "./widgets.ts";

export const WIDGETS = 10;

/** one child per Widget, made idempotently, then the Widget's status says ready: every schedule passes */
export function childMaker(): Registry {
  const registry = new Registry();
  registry.on.create(Widgets, async ({ name, body, api, patch }) => {
    await api.create(adopt(configMap(`${name}-child`, { widget: name }), { owner: body })).catch((error: unknown) => {
      if (!(error instanceof ApiError && error.reason === "AlreadyExists")) throw error;
    });
    patch.status.ready = true;
  }, { id: "child" });
  return registry;
}

const widgets = Array.from({ length: WIDGETS }, (_, i) => ({ metadata: { name: `w${i + 1}` }, spec: {} }));

export async function tenInOneStep(world: World): Promise<void> {
  await world.applyAll(Widgets, widgets);
}

export async function tenSteps(world: World): Promise<void> {
  for (const widget of widgets) await world.apply(Widgets, widget);
}

export function runCost(schedules: number, shape: "one step" | "ten steps"): Promise<SimulationResult> {
  const scenario = shape === "one step" ? tenInOneStep : tenSteps;
  return simulate({ registry: childMaker(), scenario, schedules });
}

if (import.meta.main) {
  const schedules = Number(process.argv[2] ?? 200);
  const shape = process.argv[3] === "ten" ? "ten steps" : "one step";
  const result = await runCost(schedules, shape);
  const ms = result.runs.map((run) => run.ms).sort((a, b) => a - b);
  console.log(JSON.stringify({
    widgets: WIDGETS, shape, schedules: result.runs.length, crashPoints: result.crashPoints,
    totalS: +(result.ms / 1000).toFixed(1),
    perRunMs: { median: ms[Math.floor(ms.length / 2)], p90: ms[Math.floor(ms.length * 0.9)], max: ms.at(-1) },
  }));
}
