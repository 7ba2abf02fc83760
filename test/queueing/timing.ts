// The workers' timings `kobun run` uses with no kobun.yaml: the settings schema's defaults, as
// the reconciler converts them to ms. Tests start from these and shrink what they are about.

import { resolveSettings } from "../../src/config/index.ts";
import { workerTimingOf } from "../../src/reconciling/options.ts";

export const PRODUCTION_TIMING = workerTimingOf({ settings: resolveSettings() });
