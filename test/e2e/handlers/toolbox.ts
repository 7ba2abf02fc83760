// e2e-only daemons, timers and an index for KobunTool objects (kobuntools.e2e.kobun.dev/v1, CRD
// in kobunflaky.crd.yaml), driven by test/e2e/toolbox.e2e.ts. Each logs one line per fact the
// test counts ("toolbox_daemon started on NAME", "... stopped on NAME", "toolbox_delete ran on NAME").
//   spec.role "daemon": a daemon that runs until its signal aborts;
//   spec.role "timer":  a timer every 0.3 s whose result goes to status.toolbox_timer, and a
//                       delete handler (the timer call in flight is aborted first);
//   spec.group:         indexed by group (`toolbox_by_group`); spec.role "report" objects write
//                       what the index holds for their group into status.toolbox_report.

import { on, type DaemonContext, type HandlerContext, type TimerContext } from "kobun";

const TOOLS = "kobuntools.e2e.kobun.dev/v1";
const role = (want: string) => ({ when: ({ spec }: { spec: Record<string, any> }) => spec.role === want });

on.daemon(TOOLS, async ({ name, signal, logger }: DaemonContext) => {
  logger.info(`toolbox_daemon started on ${name}`);
  await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  logger.info(`toolbox_daemon stopped on ${name}`);
}, { id: "toolbox_daemon", ...role("daemon") });

let ticks = 0;
on.timer(TOOLS, async ({ name, signal, logger }: TimerContext) => {
  ticks++;
  // A slow call: a deletion lands inside it often, and must abort it before the delete handler.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 200);
    signal.addEventListener("abort", () => (clearTimeout(timer), logger.info(`toolbox_timer aborted on ${name}`), resolve()), { once: true });
  });
  if (signal.aborted) return;
  return { ticks };
}, { id: "toolbox_timer", interval: 0.3, ...role("timer") });

on.delete(TOOLS, ({ name, logger }: HandlerContext) => {
  logger.info(`toolbox_delete ran on ${name}`);
}, { id: "toolbox_delete", ...role("timer") });

on.index(TOOLS, ({ name, spec }) => (spec.group ? { [spec.group]: name } : undefined), { id: "toolbox_by_group" });

on.timer(TOOLS, ({ spec, indexes }: TimerContext) => {
  return [...indexes.toolbox_by_group!.get(spec.group)].sort();
}, { id: "toolbox_report", interval: 0.3, finalizer: false, ...role("report") });
