// The transport under KubeClient: one string-built URL, a reused header object, one fetch
// on a keep-alive session, over HTTP/2 where the server is https and selects it (one
// connection multiplexes the requests and watches; a request costs ~0.6× the CPU of HTTP/1.1
// on a real kube-apiserver, bench/http2.ts), HTTP/1.1 otherwise. Failures become ApiError
// (with the server's Status) or ConnectionError; transient ones are retried with capped,
// jittered, abortable backoff (honouring Retry-After); a 401 re-reads the credentials once.

import { clock, sleep, untilAborted } from "../util/index.ts";
import { Backoff } from "../util/index.ts";
import { silentLogger, type Logger } from "../util/index.ts";
import type { Connection, ConnectionTLS } from "./connection.ts";
import { authenticationFailed, rereadCredentials } from "./reauthentication.ts";
import type { ApiError } from "./errors.ts";
import { streamBudget } from "./budget.ts";
import { Deadlines } from "./deadlines.ts";
import { apiErrorFrom, networkFailure } from "./failures.ts";
import { attemptSpan, endSpan } from "./attempt-span.ts";
import { RequestObservers, type RequestObserver } from "./observer.ts";
import { encodedBody, parsedBody, parsedSlimBody, queryString, type Query } from "./bodies.ts";
import { Wire } from "./wire.ts";

/**
 * kube.requestTimeout's default (60 s), for a client made without settings (kobun freeze,
 * typegen, tests); the runtime passes the setting. Pinned to the settings schema's by
 * test/contracts/defaults.test.ts: this room may not import config/.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

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
  /** Only HTTP/1.1, even to an https server that offers HTTP/2 (kube.http1). */
  http1?: boolean;
}

export type { Query } from "./bodies.ts";

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
  /**
   * The answer is an object whose managedFields the caller never reads: they are not parsed
   * (kube/managed-fields.ts).
   */
  withoutManagedFields?: boolean;
}

/** The longest Retry-After honoured as given. */
const MAX_RETRY_AFTER_MS = 60_000;

/** The Accept header the caller asked for, in a copy of `headers` (which are shared). */
const withAccept = (headers: Record<string, string>, accept: string | undefined) =>
  (accept ? { ...headers, Accept: accept } : headers);

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
  private readonly wire: Wire;
  private readonly observers: RequestObservers;

  constructor(
    readonly connection: Connection,
    options: ClientOptions = {},
  ) {
    this.server = connection.server;
    this.logger = options.logger ?? silentLogger;
    this.retries = options.retries ?? 5;
    this.backoff = options.backoff ?? { initialMs: 200, maxMs: 5000 };
    this.deadlines = new Deadlines(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
    this.observers = new RequestObservers(connection.server, options.observer);
    this.baseHeaders = { Accept: "application/json", "User-Agent": options.userAgent ?? "kobun" };
    this.wire = new Wire(this.server, connection.tls, options.http1, this.logger, connection.proxy);
  }

  /** Adds an observer of every attempt (an operator given this client); the returned call removes it. */
  observe(observer: RequestObserver): () => void {
    return this.observers.add(observer);
  }

  /** Closes idle keep-alive connections; requests in flight finish, and the client stays usable. */
  close(): void {
    this.wire.close();
  }

  request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    // A virtual clock (util/clock.ts) fires its next timer only once no request is in flight.
    const time = clock();
    if (!time.virtual) return this.attempts<T>(method, path, options);
    const endWork = time.working();
    return this.attempts<T>(method, path, options).finally(endWork);
  }

  private async attempts<T>(method: string, path: string, options: RequestOptions): Promise<T> {
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
      this.wire.follow(this.connection.tls);
      // One attempt, answer included, under the request deadline.
      const deadline = this.deadlines.start(signal);
      let text = "";
      let error: ApiError | undefined;
      const started = performance.now();
      const span = attemptSpan(method, path, this.observers.host);
      try {
        const headers = this.headersFor(auth, contentType);
        const init = { method, headers: withAccept(headers, options.accept), body, signal: deadline.signal };
        const response = await this.wire.sent(url, init);
        if (!response.ok) error = await apiErrorFrom(response, method, path);
        else if (options.discardAnswer) await response.arrayBuffer();
        else if (response.status !== 204) text = await response.text();
        this.observers.ended(method, String(response.status), started);
        if (span) endSpan(span, response.status);
      } catch (cause) {
        this.observers.ended(method, "<error>", started);
        if (span) endSpan(span, undefined);
        if (signal?.aborted) throw signal.reason ?? cause;
        const why = deadline.expired ? new Error(`no complete answer within ${this.deadlines.ms} ms`) : cause;
        const failure = networkFailure(why, method, path, this.server);
        const allowed = retry !== false && failure.transient && (read || retry === true || failure.unsent);
        if (!allowed || attempt >= this.retries) throw failure.error;
        backoff ??= this.newBackoff();
        await this.pause(backoff.next(), method, path, attempt, failure.error.message, signal);
        attempt++;
        continue;
      } finally {
        deadline.end();
      }
      if (!error) {
        this.connection.accepted?.(auth); // a login's renewed credentials are proven by the first success
        return options.withoutManagedFields ? parsedSlimBody<T>(text) : parsedBody<T>(text);
      }
      if (error.code === 401) {
        reauthenticated = await this.reauthenticated(error, auth, reauthenticated, signal);
        continue;
      }
      const retriable = read || retry === true ? error.transient : error.code === 429 || error.code === 503;
      if (retry === false || !retriable || attempt >= this.retries) throw error;
      backoff ??= this.newBackoff();
      const delay =
        error.retryAfter !== undefined ? Math.min(error.retryAfter * 1000, MAX_RETRY_AFTER_MS) : backoff.next();
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
  async stream(
    path: string, query: Query, signal: AbortSignal, hooks?: { waitingForSlot?(): void; sending?(): void },
    accept?: string,
  ): Promise<Response> {
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

  private async openStream(
    url: string, shown: string, signal: AbortSignal, accept: string | undefined,
  ): Promise<Response> {
    let reauthenticated = false;
    for (;;) {
      // Current credentials need no wait, so no listener on the caller's (long-lived) signal.
      const auth = this.connection.currentHeaders?.() ?? (await untilAborted(this.connection.authHeaders(), signal));
      this.wire.follow(this.connection.tls);
      let response: Response;
      const started = performance.now();
      try {
        const headers = this.headersFor(auth, undefined);
        response = await this.wire.sent(url, { method: "GET", headers: withAccept(headers, accept), signal });
        this.observers.ended("GET", String(response.status), started);
      } catch (cause) {
        this.observers.ended("GET", "<error>", started);
        if (signal.aborted) throw signal.reason ?? cause;
        throw networkFailure(cause, "GET", shown, this.server).error;
      }
      if (response.ok) {
        this.connection.accepted?.(auth);
        return response;
      }
      const error = await apiErrorFrom(response, "GET", shown);
      if (error.code !== 401) throw error;
      reauthenticated = await this.reauthenticated(error, auth, reauthenticated, signal);
    }
  }

  /**
   * After a 401: re-reads the credentials once per request and resolves true when the request may go again
   * with the new ones; otherwise throws the authentication failure.
   */
  private async reauthenticated(
    error: ApiError, auth: Record<string, string>, already: boolean, signal: AbortSignal | undefined,
  ): Promise<true> {
    const renewed = !already && (await untilAborted(rereadCredentials(this.connection, this.logger, auth), signal));
    if (renewed === true) return true;
    throw authenticationFailed(this.connection, error, renewed);
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

  private newBackoff(): Backoff {
    return new Backoff({ initial: this.backoff.initialMs, max: this.backoff.maxMs });
  }

  private async pause(
    ms: number, method: string, path: string, attempt: number, why: string, signal?: AbortSignal,
  ): Promise<void> {
    this.logger.debug("retrying request", { method, path, attempt: attempt + 1, delayMs: Math.round(ms), why });
    if (await sleep(ms, signal)) return;
    throw signal?.reason ?? new DOMException("The operation was aborted.", "AbortError");
  }
}
