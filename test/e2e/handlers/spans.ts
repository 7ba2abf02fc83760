// Sharded replicas as processes (scaling-kill.e2e.ts): with KOBUN_E2E_SPANS set, a handler on
// ConfigMaps labelled `e2e.kobun.dev/spans` appends its start and end per object to that file,
// synchronously (a SIGKILL loses nothing already written), and waits `data.ms` (default 20)
// on a timer, as a handler waiting on I/O does. The file is opened once: opening and closing
// it per line was ~5 % of a replica's CPU in bench/sharding.ts. Without the variable nothing
// is registered, so the other e2e files see no handler on ConfigMaps.

import { openSync, writeSync } from "node:fs";
import { on } from "kobun";

const file = process.env.KOBUN_E2E_SPANS;
const now = () => performance.timeOrigin + performance.now(); // epoch ms, comparable across processes

if (file) {
  const fd = openSync(file, "a");
  on.create("v1/configmaps", async ({ uid, body, signal }) => {
    writeSync(fd, `${JSON.stringify({ uid, start: now() })}\n`);
    const ms = Number((body as { data?: { ms?: string } }).data?.ms ?? 20);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
    });
    writeSync(fd, `${JSON.stringify({ uid, end: now(), aborted: signal.aborted })}\n`);
    if (signal.aborted) throw signal.reason;
  }, { id: "spans", labels: { "e2e.kobun.dev/spans": "yes" } });
}
