// What a simulated operator instance logs, read two ways: every line (debug too) is activity a
// settle watches, and from info each is kept for the run's story; and the outcome of each handler
// and reconcile call, per object, so that a report of a run that ends wrong can say which objects
// the operator was still failing on at the end, and with what (a reconcile throwing `pods "c1-1"
// not found` on every retry explains a missing object better than the diff alone).
// The instance logs JSON to this sink (its fields whole, not parsed back out of a plain line);
// the lines kept are written plain, as every other sink of the test kit writes them.

import { formatLine, type LogFields, type LogLevel, type LogSink, type MemorySink } from "../util/index.ts";

/** objects a report names at most, and characters of each one's line */
const MAX_OBJECTS = 5;
const MAX_CHARS = 240;

/** a Secret's handler error may quote what it read: never in a report */
const SECRETS = "secrets";

interface LastCall {
  /** "plural.group" as the operator's logger names it on every handler and reconcile line; undefined if not */
  resource: string | undefined;
  namespace: string | undefined;
  name: string;
  /** the failure's log message; undefined: the last call succeeded */
  failed: string | undefined;
}

/** The last call of each handler and reconcile on each object, as one instance logged them. */
export class LastCalls {
  private readonly calls = new Map<string, LastCall>();

  heard(record: LogFields): void {
    const { msg, resource, namespace, name } = record as Record<string, unknown>;
    if (typeof msg !== "string" || typeof name !== "string") return;
    const call = /^(?:Handler|Reconcile) '([^']+)' (succeeded\.|failed)/.exec(msg);
    const event = msg.startsWith("event handler failed") ? record.handler : undefined; // on.event: never retried
    const id = call?.[1] ?? event ?? (msg === "Reconciled." ? record.reconcile : undefined);
    if (typeof id !== "string") return;
    // an error a handler's options ignore is no failure: the handler is done
    const failed = event !== undefined ? `Handler '${id}' (on.event) failed: ${String(record.error)}`
      : call?.[2] === "failed" && !msg.endsWith("the error is ignored.") ? msg : undefined;
    const where = { resource: typeof resource === "string" ? resource : undefined, namespace: stringOr(namespace) };
    this.calls.delete(`${where.resource} ${where.namespace}/${name} ${id}`); // the newest last, in order
    this.calls.set(`${where.resource} ${where.namespace}/${name} ${id}`, { ...where, name, failed });
  }

  /**
   * One line per object whose last call of some handler or reconcile failed (the newest such failure), at most
   * MAX_OBJECTS, newest first; `exists` leaves out objects gone by the end, Secrets are never named
   */
  failing(exists: (object: { plural: string; group: string; namespace?: string; name: string }) => boolean) {
    const lines = new Map<string, string>();
    for (const call of [...this.calls.values()].reverse()) {
      const [plural, ...group] = call.resource?.split(".") ?? [];
      const object = `${plural ?? "object"} ${call.namespace ? `${call.namespace}/` : ""}${call.name}`;
      if (call.failed === undefined || lines.has(object) || plural === SECRETS) continue;
      const where = { group: group.join("."), name: call.name, ...maybe(call.namespace) };
      if (plural !== undefined && !exists({ plural, ...where })) continue;
      lines.set(object, `${object}: ${call.failed}`.slice(0, MAX_CHARS));
    }
    const all = [...lines.values()];
    return all.length > MAX_OBJECTS ? [...all.slice(0, MAX_OBJECTS), `... and ${all.length - MAX_OBJECTS} more`] : all;
  }
}

/**
 * A sink for one instance: every line (debug too) marks activity; from info, lines are kept in `logs`, each
 * prefixed with its instance; handler and reconcile outcomes go to `calls`. A killed instance's code may still
 * run a while in this process: what it logs after `dead` is dropped.
 */
export function instanceSink(
  parts: { logs: MemorySink; onActivity: () => void; calls: LastCalls }, label: string, dead: AbortSignal,
): LogSink {
  const keep: Record<LogLevel, boolean> = { debug: false, info: true, warn: true, error: true };
  return {
    level: "debug", format: "json",
    write(line, level) {
      if (dead.aborted) return;
      parts.onActivity();
      // a debug line matters only when it is a reconcile's success: the rest are not parsed
      if (!keep[level] && !line.includes('"msg":"Reconciled."')) return;
      const { time, level: _level, msg, ...fields } = JSON.parse(line) as LogFields;
      parts.calls.heard({ msg, ...fields });
      if (!keep[level]) return;
      const plain = formatLine("plain", level, String(msg), fields);
      parts.logs.write(`${label}${String(time)}${plain.slice(plain.indexOf(" "))}`, level);
    },
  };
}

function stringOr(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function maybe(namespace: string | undefined): { namespace?: string } {
  return namespace === undefined ? {} : { namespace };
}
