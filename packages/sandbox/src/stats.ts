// Request accounting for tests: an audit-style log of every request (verb, method, path,
// query, time), counts by verb and resource, and `waitFor`, which resolves on the next
// matching request without polling.

export interface RequestRecord {
  verb: string; method: string; path: string; query: string; at: number; plural?: string;
}

export interface SandboxStats {
  openWatches(): number;
  /** in-flight HTTP requests, open watch streams included (Bun does not expose idle keep-alive sockets) */
  openConnections(): number;
  requests(verb?: string, filter?: { plural?: string }): number;
  log: RequestRecord[];
  reset(): void;
}

type Waiter = { pred: (r: RequestRecord) => boolean; resolve: () => void };

export class RequestLog {
  readonly log: RequestRecord[] = [];
  private waiters: Waiter[] = [];

  record(r: RequestRecord): void {
    this.log.push(r);
    if (this.log.length > 200_000) this.log.splice(0, 100_000);
    if (!this.waiters.length) return;
    const hit = this.waiters.filter((w) => w.pred(r));
    if (!hit.length) return;
    this.waiters = this.waiters.filter((w) => !hit.includes(w));
    for (const w of hit) w.resolve();
  }

  count(verb?: string, filter?: { plural?: string }): number {
    let n = 0;
    for (const r of this.log) {
      if (verb && r.verb !== verb) continue;
      if (filter?.plural && r.plural !== filter.plural) continue;
      n++;
    }
    return n;
  }

  reset(): void {
    this.log.length = 0;
  }

  waitFor(pred: (r: RequestRecord) => boolean, timeoutMs = 5000): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const w: Waiter = {
        pred,
        resolve: () => { clearTimeout(timer); resolve(); },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new Error(`sandbox.waitFor: no matching request within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  /** reject nothing, just forget pending waiters (on stop) */
  clearWaiters(): void {
    this.waiters = [];
  }
}
