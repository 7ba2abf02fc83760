// What every request handler of the HTTP front reads: the store and its objects, the resource
// registry, faults, the request log, the open watches, authentication and admission. Its own
// file so that the front (server.ts) and the handlers it hands requests to (watch-request.ts,
// server-apply.ts) share it without importing each other.

import type { SandboxAdmission } from "./admission.ts";
import type { Faults } from "./faults.ts";
import type { Objects } from "./objects.ts";
import type { ServiceAccountTokens } from "./rbac.ts";
import type { ResourceRegistry } from "./resources.ts";
import type { RequestLog } from "./stats.ts";
import type { Store } from "./store.ts";
import type { WatchStream } from "./watch.ts";

export interface ServerContext {
  store: Store;
  registry: ResourceRegistry;
  objects: Objects;
  faults: Faults;
  requests: RequestLog;
  watches: Set<WatchStream>;
  token?: string;
  /** tokens from the TokenRequest API (their requests are authorized by RBAC) */
  saTokens: ServiceAccountTokens;
  /** calls the admission and conversion webhooks registered in the store (admission.ts) */
  admission: SandboxAdmission;
  bookmarkIntervalMs: number;
  /** `shardSelector` on LIST and WATCH (the ShardedListAndWatch gate), see shards.ts. */
  shardSelectors: boolean;
  log?: (line: string) => void;
}
