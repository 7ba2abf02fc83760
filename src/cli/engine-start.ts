// The compiled binary's first import (cli/build.ts's entry): runs before any other module of
// it is evaluated, so the exec of cli/engine.ts happens before handlers or the runtime load.
import { execWithEngineOptions } from "./engine.ts";

execWithEngineOptions();
