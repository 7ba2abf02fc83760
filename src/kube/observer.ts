// What kube/ tells an observer about its requests, without knowing who listens: runtime/
// wires the metrics in (observability/ is a side room this one may not import). The shape
// follows client-go's tools/metrics hooks, so rest_client_* can carry client-go's names.

export interface RequestObserver {
  /**
   * One attempt ended: `code` is the HTTP status, or "<error>" when no answer came (as
   * client-go says it); `seconds` from sending to the answer's headers and body (a watch:
   * to its headers). Retries are attempts of their own.
   */
  requested(method: string, host: string, code: string, seconds: number): void;
}

/** The observers of one client, and the `host` label they all get (host:port, as client-go's URL host). */
export class RequestObservers {
  private list: readonly RequestObserver[];
  /** host:port of the server, as client-go's URL host. */
  readonly host: string;

  constructor(server: string, first?: RequestObserver) {
    this.list = first ? [first] : [];
    this.host = hostOf(server);
  }

  /** Adds one; the returned call removes it. */
  add(observer: RequestObserver): () => void {
    this.list = [...this.list, observer];
    return () => (this.list = this.list.filter((o) => o !== observer));
  }

  /** One attempt that started at `started` (performance.now()) ended with `code`. */
  ended(method: string, code: string, started: number): void {
    if (this.list.length === 0) return;
    const seconds = (performance.now() - started) / 1000;
    for (const observer of this.list) observer.requested(method, this.host, code, seconds);
  }
}

/**
 * The server's host[:port] as written, as Go's url.Host keeps it: in a pod "10.96.0.1:443", the
 * same label as client-go's (WHATWG's URL.host drops a default port, and said "10.96.0.1").
 */
function hostOf(server: string): string {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(server)?.[1];
  return authority ? authority.slice(authority.lastIndexOf("@") + 1) : server;
}
