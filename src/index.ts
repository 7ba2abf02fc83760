// kobun's public API: what handler modules import (`import { on } from "kobun"`).
// Minimal version written by the handling engineer; the lead extends it (runtime, run()).
export {
  on, registry, Registry, PermanentError, TemporaryError, PRESENT, ABSENT,
  type HandlerContext, type EventContext, type Patch, type Diff, type DiffItem, type Cause,
  type HandlerOptions, type DeleteOptions, type FieldOptions, type EventOptions,
} from "./handling/index.ts";
