// The transport under KubeClient: one string-built URL, a reused header object, one fetch
// on a keep-alive session. Failures become ApiError (with the server's Status) or
// ConnectionError; transient ones are retried with capped, jittered, abortable backoff
// (honouring Retry-After); a 401 re-reads the credentials once.

import { sleep, untilAborted } from "../util/abort.ts";
import { Backoff } from "../util/backoff.ts";
import { silentLogger, type Logger } from "../util/log.ts";
import type { Connection, ConnectionTLS } from "./connection.ts";
import type { ApiError } from "./errors.ts";
import { streamBudget } from "./budget.ts";
import { Deadlines } from "./deadlines.ts";
import { apiErrorFrom, networkFailure } from "./failures.ts";
import { attemptSpan, endSpan } from "./attempt-span.ts";
import { RequestObservers, type RequestObserver } from "./observer.ts";

export interface ClientOptions {
  logger?: Logger;
  /** Further attempts after a transient failure (default 5). */
  retries?: number;
  /** Backoff between attempts (default 200 ms → 5 s), unless the server sent Retry-After. */
  backoff?: { initialMs: number; maxMs: number };
  userAgent?: string;
  /**
   * A request (not a watch) with no complete answer after this long is aborted and treated
   * like a connection failure: reads are retried, writes reported. Default 60 s. A half-dead
   * connection must not hang an object's worker forever. Watches have the watcher's own
   * inactivity timeout instead. 0 turns deadlines off.
   */
  requestTimeoutMs?: number;
  /** Hears of every attempt (rest_client_* metrics); none by default. */
  observer?: RequestObserver;
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  /** A string or bytes are sent as they are; anything else as JSON. */
  body?: unknown;
  contentType?: string;
  /** The Accept header instead of application/json (a metadata-only LIST asks for PartialObjectMetadataList). */
  accept?: string;
  signal?: AbortSignal;
  /**
   * Retry policy. Unset: reads are retried on every transient failure; writes only when they
   * certainly did not reach the server, or got 429/503. `true`: the caller vouches that the
   * request is idempotent, so writes are retried like reads. `false`: never retried.
   */
  retry?: boolean;
  /**
   * The answer's body is read to its end (the connection stays reusable) but neither decoded
   * nor parsed: the call resolves with undefined. For writes whose answer is never used.
   */
  discardAnswer?: boolean;
}

/** The longest Retry-After honoured as given. */
const MAX_RETRY_AFTER_MS = 60_000;

type FetchFn = (url: string, init: RequestInit & { tls?: ConnectionTLS }) => Promise<Response>;

export class Transport {
  readonly server: string;
  protected readonly logger: Logger;
  private readonly retries: number;
  private readonly backoff: { initialMs: number; maxMs: number };
  private readonly deadlines: Deadlines;
  private readonly baseHeaders: Record<string, string>;
  // Header objects built once per credential (reused by every request until it changes).
  private authRef?: Record<string, string>;
  private plainHeaders: Record<string, string> = {};
  private readonly typedHeaders = new Map<string, Record<string, string>>();
  // One Bun.FetchSession per TLS configuration: its own keep-alive pool, closed by close().
  private sessionTls: ConnectionTLS | undefined;
  private session?: { fetch: FetchFn; close(): void };
  private send!: FetchFn;
  private readonly observers: RequestObservers;

  constructor(
    readonly connection: Connection,
    options: ClientOptions = {},
  ) {
    this.server = connection.server;
    this.logger = options.logger ?? silentLogger;
    this.retries = options.retries ?? 5;
    this.backoff = options.backoff ?? { initialMs: 200, maxMs: 5000 };
    this.deadlines = new Deadlines(options.requestTimeoutMs ?? 60_000);
    this.observers = new RequestObservers(connection.server, options.observer);
    this.baseHeaders = { Accept: "application/json", "User-Agent": options.userAgent ?? "kobun" };
    this.useTls(connection.tls);
  }

  /** Adds an observer of every attempt (an operator given this client); the returned call removes it. */
  observe(observer: RequestObserver): () => void {
    return this.observers.add(observer);
  }

  /** Closes idle keep-alive connections; requests in flight finish, and the client stays usable. */
  close(): void {
    this.session?.close();
  }

  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const url = this.server + path + (options.query ? queryString(options.query) : "");
    const { signal, retry } = options;
    const { body, contentType } = encodedBody(options);
    const read = method === "GET" || method === "HEAD";
    let attempt = 0;
    let reauthenticated = false;
    let backoff: Backoff | undefined;
    for (;;) {
      // Current credentials need no wait, so no listener on the caller's (long-lived) signal.
      const auth = this.connection.currentHeaders?.() ?? (await untilAborted(this.connection.authHeaders(), signal));
      if (this.connection.tls !== this.sessionTls) this.useTls(this.connection.tls);
      // One attempt, answer included, under the request deadline.
      const deadline = this.deadlines.start(signal);
      let text = "";
      let error: ApiError | undefined;
      const started = performance.now();
      const span = attemptSpan(method, path, this.observers.host);
      try {
        const headers = this.headersFor(auth, contentType);
        const response = await this.send(url, { method, headers: options.accept ? { ...headers, Accept: options.accept } : headers, body, signal: deadline.signal });
        if (!response.ok) error = await apiErrorFrom(response, method, path);
        else if (options.discardAnswer) await response.arrayBuffer();
        else if (response.status !== 204) text = await response.text();
        this.observers.ended(method, String(response.status), started);
        if (span) endSpan(span, response.status);
      } catch (cause) {
        this.observers.ended(method, "<error>", started);
        if (span) endSpan(span, undefined);
        if (signal?.aborted) throw signal.reason ?? cause;
        const failure = networkFailure(deadline.expired ? new Error(`no complete answer within ${this.deadlines.ms} ms`) : cause, method, path, this.server);
        const allowed = retry !== false && failure.transient && (read || retry === true || failure.unsent);
        if (!allowed || attempt >= this.retries) throw failure.error;
        backoff ??= this.newBackoff();
        await this.pause(backoff.next(), method, path, attempt, failure.error.message, signal);
        attempt++;
        continue;
      } finally {
        deadline.end();
      }
      if (!error) return parsedBody<T>(text);
      if (error.code === 401) {
        const renewed = !reauthenticated && (await untilAborted(this.reauthenticated(auth), signal));
        if (renewed === true) {
          reauthenticated = true;
          continue;
        }
        throw this.authenticationFailed(error, renewed);
      }
      const retriable = read || retry === true ? error.transient : error.code === 429 || error.code === 503;
      if (retry === false || !retriable || attempt >= this.retries) throw error;
      backoff ??= this.newBackoff();
      const delay = error.retryAfter !== undefined ? Math.min(error.retryAfter * 1000, MAX_RETRY_AFTER_MS) : backoff.next();
      await this.pause(delay, method, path, attempt, `${error.code} ${error.reason ?? ""}`.trim(), signal);
      attempt++;
    }
  }

  /**
   * A raw streaming GET for watches. Resolves once the headers arrive (non-2xx → ApiError,
   * 410 included); the caller reads the body; aborting `signal` closes the socket at once.
   * No retries (the watcher owns its reconnect policy), except one after re-reading
   * credentials on a 401. Each stream first waits for a slot of the process's stream budget
   * and holds it until `signal` aborts (abort it once done with the body), so streams never
   * take the fetch slots that requests need.
   */
  async stream(path: string, query: Query, signal: AbortSignal, hooks?: { waitingForSlot?(): void; sending?(): void }, accept?: string): Promise<Response> {
    const url = this.server + path + queryString(query);
    const shown = path + queryString(query);
    const release = await streamBudget.acquire(signal, hooks?.waitingForSlot);
    hooks?.sending?.();
    try {
      return await this.openStream(url, shown, signal, accept);
    } catch (error) {
      release();
      throw error;
    }
  }

  private async openStream(url: string, shown: string, signal: AbortSignal, accept: string | undefined): Promise<Response> {
    let reauthenticated = false;
    for (;;) {
      // Current credentials need no wait, so no listener on the caller's (long-lived) signal.
      const auth = this.connection.currentHeaders?.() ?? (await untilAborted(this.connection.authHeaders(), signal));
      if (this.connection.tls !== this.sessionTls) this.useTls(this.connection.tls);
      let response: Response;
      const started = performance.now();
      try {
        const headers = this.headersFor(auth, undefined);
        response = await this.send(url, { method: "GET", headers: accept ? { ...headers, Accept: accept } : headers, signal });
        this.observers.ended("GET", String(response.status), started);
      } catch (cause) {
        this.observers.ended("GET", "<error>", started);
        if (signal.aborted) throw signal.reason ?? cause;
        throw networkFailure(cause, "GET", shown, this.server).error;
      }
      if (response.ok) return response;
      const error = await apiErrorFrom(response, "GET", shown);
      if (error.code === 401) {
        const renewed = !reauthenticated && (await untilAborted(this.reauthenticated(auth), signal));
        if (renewed === true) {
          reauthenticated = true;
          continue;
        }
        throw this.authenticationFailed(error, renewed);
      }
      throw error;
    }
  }

  private headersFor(auth: Record<string, string>, contentType: string | undefined): Record<string, string> {
    if (auth !== this.authRef) {
      this.authRef = auth;
      this.plainHeaders = { ...this.baseHeaders, ...auth };
      this.typedHeaders.clear();
    }
    if (contentType === undefined) return this.plainHeaders;
    let headers = this.typedHeaders.get(contentType);
    if (!headers) {
      headers = { ...this.plainHeaders, "Content-Type": contentType };
      this.typedHeaders.set(contentType, headers);
    }
    return headers;
  }

  private useTls(tls: ConnectionTLS | undefined): void {
    this.session?.close();
    this.sessionTls = tls;
    const FetchSession = (Bun as { FetchSession?: new (init: { tls?: ConnectionTLS }) => { fetch: FetchFn; close(): void } }).FetchSession;
    if (FetchSession) {
      this.session = new FetchSession(tls ? { tls } : {});
      this.send = this.session.fetch;
    } else {
      this.session = undefined;
      this.send = tls ? (url, init) => fetch(url, { ...init, tls }) : (url, init) => fetch(url, init);
    }
  }

  /** After a 401: re-read the credentials; true when they changed, so another attempt may succeed. */
  /** True when other credentials came; the failure when re-reading them failed (the request's error says it). */
  private async reauthenticated(before: Record<string, string>): Promise<boolean | Error> {
    const tlsBefore = this.connection.tls;
    this.logger.info("re-reading credentials after 401", { server: this.server, user: this.connection.user, auth: this.connection.authKind });
    try {
      await this.connection.reauthenticate(before);
    } catch (error) {
      this.logger.warn("re-reading credentials failed", { server: this.server, user: this.connection.user, error });
      return error instanceof Error ? error : new Error(String(error));
    }
    return (await this.connection.authHeaders()) !== before || this.connection.tls !== tlsBefore;
  }

  private authenticationFailed(error: ApiError, renewal: boolean | Error): ApiError {
    const renewing = renewal instanceof Error ? `; re-reading the credentials failed: ${renewal.message}` : "";
    error.message = `authentication failed against ${this.server} as ${this.connection.user || "(no user)"} (${this.connection.authKind}): ${error.message}${renewing}`;
    return error;
  }

  private newBackoff(): Backoff {
    return new Backoff({ initial: this.backoff.initialMs, max: this.backoff.maxMs });
  }

  private async pause(ms: number, method: string, path: string, attempt: number, why: string, signal?: AbortSignal): Promise<void> {
    this.logger.debug("retrying request", { method, path, attempt: attempt + 1, delayMs: Math.round(ms), why });
    if (!(await sleep(ms, signal))) throw signal?.reason ?? new DOMException("The operation was aborted.", "AbortError");
  }
}

export function queryString(query: Query): string {
  let text = "";
  for (const key in query) {
    const value = query[key];
    if (value === undefined) continue;
    text += (text ? "&" : "?") + key + "=" + encodeURIComponent(String(value));
  }
  return text;
}

/** A request's body as sent: strings and bytes as they are, anything else as JSON. */
function encodedBody(options: RequestOptions): { body?: string | Uint8Array; contentType?: string } {
  const { body, contentType } = options;
  if (body === undefined) return {};
  if (typeof body === "string" || body instanceof Uint8Array) return { body, contentType: contentType ?? "application/json" };
  return { body: JSON.stringify(body), contentType: contentType ?? "application/json" };
}

/** An answer's body: its JSON, nothing for an empty one, or the text when it is not JSON (e.g. /healthz: the caller asked for it). */
function parsedBody<T>(text: string): T {
  if (!text) return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    return text as T;
  }
}
