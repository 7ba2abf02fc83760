// testing/: the kit handler authors use in their own tests (`import { startOperator } from
// "kobun/testing"`), the equivalent of Kopf's KopfRunner with no cluster: a sandbox API server
// and the operator in-process, objects applied (status too), conditions awaited on a watch,
// held for a window (`consistently`), the Events about an object, and the operator's log lines.
// And `simulate()`: the operator run through a scenario under many seeded schedules of faults
// (a crash after each write, stale and merged watches, failed writes), each run on a virtual clock
// and compared with a fault-free one (simulate*.ts).
//
//   import { startOperator } from "kobun/testing";
//   import { Examples } from "../handlers/example.ts";      // registers its handlers
//   await using kit = await startOperator();
//   await kit.apply(Examples, { metadata: { name: "hello" }, spec: { size: 1 } });
//   const done = await kit.until(Examples, "hello", (o) => o.status?.create_fn);
//   await kit.logs.until(/succeeded/);
//
// Must never: poll (every wait is a watch, or a log line heard as it is written); read the
// machine's kubeconfig (the sandbox writes its own); be imported by the runtime (it stands
// beside it: test/contracts/rooms.ts).

export {
  TestOperator, type Applied, type ApplyOptions, type ConsistentlyOptions, type Named, type WaitOptions,
} from "./operator.ts";
export { startOperator, type TestOperatorOptions } from "./start.ts";
export { ConsistentlyError } from "./consistently.ts";
export { type EventsOptions } from "./events.ts";
export { UntilTimeoutError } from "./until.ts";
export { simulate, SimulationFailure, type SimulateOptions, type SimulationResult } from "./simulate.ts";
export type { Fault, FaultKinds, RequestSite, Schedule, WriteSite } from "./simulate-schedule.ts";
export type { Invariant, RunFailure } from "./simulate-run.ts";
export type { World } from "./simulate-world.ts";
