// The operator's logger as the settings ask for it: level and format, to stderr, a line repeated
// identically more than 5 times in 10 s summarised (util/log-repeats.ts).

import type { Settings } from "../config/index.ts";
import { Logger, stderrSink } from "../util/index.ts";
import { withoutRepeats } from "../util/index.ts";

export function loggerFor(settings: Settings): Logger {
  return new Logger(withoutRepeats(stderrSink(settings.logging.level, settings.logging.format)));
}
