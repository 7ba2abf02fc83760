// A sandbox in a process of its own, for benches that measure an operator: on 2 cores the
// sandbox's CPU is then not charged to the operator being timed. Prints one JSON line
// ({ url, kubeconfigPath }) when listening, then answers commands on stdin with one JSON line
// each: `watches` (open watch streams), `requests` (counts by verb and resource), `cpu` (this process's CPU µs so far), `stop`.
// `bun bench/sandbox-server.ts [historySize]`; started and stopped by common.ts spawnSandbox.

import { startSandbox } from "@kobun/sandbox";

const historySize = Number(process.argv[2] ?? 1000);
if (!Number.isInteger(historySize) || historySize < 1) {
  console.error(`sandbox-server: historySize must be a positive integer, got ${process.argv[2]}`);
  process.exit(2);
}
const sandbox = await startSandbox({ historySize });
console.log(JSON.stringify({ url: sandbox.url, kubeconfigPath: sandbox.kubeconfigPath }));
for await (const line of console) {
  const cmd = line.trim();
  if (cmd === "watches") console.log(JSON.stringify({ watches: sandbox.stats.openWatches() }));
  else if (cmd === "requests") {
    // by verb and resource, as the sandbox's request log has them (what an operator asked for)
    const counts: Record<string, number> = {};
    for (const r of sandbox.stats.log) counts[`${r.verb} ${r.plural ?? "-"}`] = (counts[`${r.verb} ${r.plural ?? "-"}`] ?? 0) + 1;
    console.log(JSON.stringify({ requests: counts }));
  } else if (cmd === "cpu") {
    const { user, system } = process.cpuUsage();
    console.log(JSON.stringify({ cpuUs: user + system }));
  } else if (cmd === "stop") break;
  else console.log(JSON.stringify({ error: `unknown command ${JSON.stringify(cmd)}` }));
}
await sandbox.stop();
process.exit(0);
