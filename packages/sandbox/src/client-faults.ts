// Faults aimed at one client, told apart by the user it impersonates (kubeconfig `as:`, the
// Impersonate-User header), else by its User-Agent: what a simulation needs to kill one
// operator process faithfully. `onRequest` hears each request as it arrives, before it is served
// (a listener that cuts the client off then kills it at that await); `onWrite` hears each write
// of a client the moment it commits (before its answer is sent); `cutOff` refuses every later
// request of that client, and the answer of a write that committed after the cut, as a killed
// process hears nothing and sends nothing more; `failWrites` and `failRequests` answer a client's
// chosen writes (or reads) with an error instead.

import { ApiStatusError, reasonFor } from "./status.ts";

/** one committed write, as `onWrite` hears it */
export interface WriteRecord {
  /** the impersonated user, else the User-Agent */
  client: string;
  verb: string;
  group: string;
  plural: string;
  subresource?: string;
  namespace: string;
  name: string;
  /** the object's metadata.generateName, when it was made with one */
  generateName?: string;
  /** the status a `failWrites` / `failRequests` rule answered instead: not made (name and namespace then unknown);
   * a failed read is told as such a record too, with its verb */
  failed?: number;
}

/** one request as it arrives, as `onRequest` hears it (a create's name is in its body: "" here, as a list's) */
export interface RequestTarget {
  group: string;
  plural: string;
  subresource?: string;
  namespace: string;
  name: string;
}

/** which requests a rule answers with an error: the `skip + 1`th matching one (over the matching clients), and on */
export interface WriteFailure {
  /** the clients whose requests it fails: every one whose name starts so (default: any) */
  clientPrefix?: string;
  status: number;
  /** failWrites: a write verb (default any write); failRequests: any verb, reads too (default any but watch) */
  verb?: string;
  plural?: string;
  /** the matching writes of this client to let through before failing (default 0) */
  skip?: number;
  /** how many to fail (default 1) */
  count?: number;
  /** the Retry-After of a 429 or 503, in seconds (default 1) */
  retryAfterSeconds?: number;
}

interface InFlight { client: string; verb: string; group: string; plural: string; subresource?: string }

const WRITE_VERBS = new Set(["create", "update", "patch", "delete"]);

/** who sent a request, as ClientFaults names clients */
export function clientOf(req: Request): string {
  return req.headers.get("impersonate-user") ?? req.headers.get("user-agent") ?? "";
}

export class ClientFaults {
  private readonly cut = new Set<string>();
  private readonly listeners = new Set<(write: WriteRecord) => void>();
  private readonly requestListeners = new Set<RequestListener>();
  private failures: (WriteFailure & { seen: number; left: number; reads: boolean })[] = [];
  private readonly inFlight = new WeakMap<Request, InFlight>();

  /** every later request of `client` is refused (403: no client retries it), and no answer of a write in flight */
  cutOff(client: string): void {
    this.cut.add(client);
  }

  isCutOff(client: string): boolean {
    return this.cut.has(client);
  }

  /** hears each committed create, update, patch and delete (and each failed by `failWrites`), synchronously */
  onWrite(listener: (write: WriteRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * hears each request as it arrives (reads and watches too), with its client and target (undefined: not a resource),
   * before it is served: cutting the client off here refuses this very request. Returns the unsubscribe
   */
  onRequest(listener: RequestListener): () => void {
    this.requestListeners.add(listener);
    return () => this.requestListeners.delete(listener);
  }

  /** answers chosen writes of the matching clients with `status` instead of making them */
  failWrites(rule: WriteFailure): void {
    this.failures.push({ ...rule, seen: 0, left: rule.count ?? 1, reads: false });
  }

  /** as failWrites, for any request (a GET or LIST too); 429 and 503 carry Retry-After: 1 */
  failRequests(rule: WriteFailure): void {
    this.failures.push({ ...rule, seen: 0, left: rule.count ?? 1, reads: true });
  }

  reset(): void {
    this.cut.clear();
    this.failures = [];
  }

  /** at a request's start: refuses a cut-off client, fails a chosen write, remembers a write for `written` */
  begin(req: Request, verb: string, target: BegunTarget | undefined): void {
    if (this.cut.size === 0 && this.listeners.size === 0 && this.failures.length === 0) {
      if (this.requestListeners.size === 0) return;
    }
    const client = clientOf(req);
    const heard: RequestTarget | undefined = target && {
      group: target.group, plural: target.plural, namespace: target.ns ?? "", name: target.name ?? "",
      ...(target.sub ? { subresource: target.sub } : {}),
    };
    for (const listener of [...this.requestListeners]) listener(client, verb, heard);
    if (this.cut.has(client)) throw refused(client);
    if (target === undefined) return;
    const { group, plural, sub } = target;
    this.failChosen(client, verb, group, plural);
    if (!WRITE_VERBS.has(verb)) return;
    this.inFlight.set(req, { client, verb, group, plural, ...(sub ? { subresource: sub } : {}) });
  }

  /** the write of `req` committed, leaving `object`: tells the listeners (one of them may cut its client off) */
  written(req: Request, object: any): void {
    const write = this.inFlight.get(req);
    if (write === undefined) return;
    this.inFlight.delete(req);
    const metadata = object?.metadata ?? {};
    const record: WriteRecord = {
      ...write, namespace: metadata.namespace ?? "", name: metadata.name ?? "",
      ...(metadata.generateName ? { generateName: metadata.generateName } : {}),
    };
    for (const listener of [...this.listeners]) listener(record);
  }

  /** the answer to send: a cut-off client's is replaced, as a dead process hears nothing */
  answer(req: Request, response: Response): Response {
    if (this.cut.size === 0 || response.status >= 400 || !this.cut.has(clientOf(req))) return response;
    return new Response(null, { status: 503 });
  }

  private failChosen(client: string, verb: string, group: string, plural: string): void {
    const rule = this.failures.find((r) => r.left > 0 && client.startsWith(r.clientPrefix ?? "") &&
      (r.reads || WRITE_VERBS.has(verb)) && (r.verb === undefined ? verb !== "watch" : r.verb === verb) &&
      (r.plural === undefined || r.plural === plural));
    if (rule === undefined) return;
    rule.seen++;
    if (rule.seen <= (rule.skip ?? 0)) return;
    rule.left--;
    const record: WriteRecord = { client, verb, group, plural, namespace: "", name: "", failed: rule.status };
    for (const listener of [...this.listeners]) listener(record);
    const message = rule.status === 409
      ? `Operation cannot be fulfilled on ${plural}: the object has been modified (sandbox: injected conflict)`
      : rule.status === 429 ? "Too many requests, please try again later."
      : `sandbox: injected failure (${rule.status})`;
    const retry = rule.status === 429 || rule.status === 503 ? (rule.retryAfterSeconds ?? 1) : undefined;
    const details = retry === undefined ? {} : { retryAfterSeconds: retry };
    throw new ApiStatusError(rule.status, reasonFor(rule.status), message, details, retry);
  }
}

/** a request's target as the router found it */
interface BegunTarget { group: string; plural: string; sub?: string; ns?: string; name?: string }

type RequestListener = (client: string, verb: string, target: RequestTarget | undefined) => void;

/** 403, which no client retries: a killed process's requests (an operator's last ones on exit) end at once */
function refused(client: string): ApiStatusError {
  return new ApiStatusError(403, reasonFor(403), `sandbox: client ${client} is cut off (a killed process)`, {});
}
