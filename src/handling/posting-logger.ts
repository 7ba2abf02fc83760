// A handler's logger whose lines are also posted as Kubernetes Events about the handled object
// (`posting.logs` in kobun.yaml), as Kopf's per-object logger does. Only the message is posted,
// never the fields: a field may hold what must not leave the process's log. Lines are posted
// at `posting.level` or above whatever the log's own level is; the poster's correlator counts
// repeated lines into one Event and keeps each object within its budget.

import type { KubeObject } from "../kube/index.ts";
import type { EventPoster } from "../posting/index.ts";
import { Logger, type LogFields, type LogLevel } from "../util/index.ts";

/** The reason of Events posted from log lines (Kopf's). */
export const LOGGING_REASON = "Logging";

class PostingLogger extends Logger {
  constructor(
    private readonly inner: Logger,
    private readonly poster: EventPoster,
    private readonly object: KubeObject,
  ) {
    super(inner.sink, {}, inner);
  }

  override child(fields: LogFields): Logger {
    return new PostingLogger(this.inner.child(fields), this.poster, this.object);
  }

  override debug(msg: string, fields?: LogFields): void {
    this.inner.debug(msg, fields);
    this.post("debug", msg);
  }
  override info(msg: string, fields?: LogFields): void {
    this.inner.info(msg, fields);
    this.post("info", msg);
  }
  override warn(msg: string, fields?: LogFields): void {
    this.inner.warn(msg, fields);
    this.post("warn", msg);
  }
  override error(msg: string, fields?: LogFields): void {
    this.inner.error(msg, fields);
    this.post("error", msg);
  }

  private post(level: LogLevel, msg: string): void {
    const type = level === "warn" || level === "error" ? "Warning" : "Normal";
    this.poster.post(this.object, type, LOGGING_REASON, msg, level);
  }
}

/** `logger`, or when the poster posts log lines, one that also posts them about `object`. */
export function objectLogger(logger: Logger, poster: EventPoster | undefined, object: KubeObject): Logger {
  return poster?.postsLogs ? new PostingLogger(logger, poster, object) : logger;
}
