// What a cycle is given: the resource's handlers and settings (CycleEnv). Apart from cycle.ts so
// that selection.ts, which cycle.ts calls, can read it without importing cycle.ts back.

import type { Resource } from "../kube/index.ts";
import type { Logger } from "../util/index.ts";
import type { HandlerSpec } from "../declaring/index.ts";
import type { HandlerTools } from "./context.ts";
import type { DiffBasePolicy } from "./diffbase.ts";
import type { HandlingDefaults } from "./runner.ts";

export interface CycleEnv {
  resource: Resource;
  /** The changing handlers of the resource (not on.event), in registration order. */
  handlers: HandlerSpec[];
  /** Their ids, to find their progress records. */
  ids: string[];
  hasResume: boolean;
  defaults: HandlingDefaults;
  /** What of the essence is stored as the diff base, and how much of it. */
  diffBase: DiffBasePolicy;
  logger: Logger;
  /** The API client and Event poster handlers get in their context. */
  tools?: HandlerTools;
}
