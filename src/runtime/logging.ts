// The operator's logger as the settings ask for it: level and format, to stderr.

import type { Settings } from "../config/index.ts";
import { Logger, stderrSink } from "../util/log.ts";

export function loggerFor(settings: Settings): Logger {
  return new Logger(stderrSink(settings.logging.level, settings.logging.format));
}
