// bun test/cluster/start.ts — build the binaries if needed, start a throwaway
// kube-apiserver + etcd, print how to reach it, and stop it on Ctrl-C / SIGTERM.
//   KUBECONFIG=<printed path> kubectl get ns
import { buildBinaries, kubernetesVersion, startCluster } from "./cluster.ts";

const verbose = process.argv.includes("--verbose");
buildBinaries();
const t0 = performance.now();
const cluster = await startCluster({ verbose });
console.log(`kube-apiserver ${kubernetesVersion} ready in ${((performance.now() - t0) / 1000).toFixed(1)}s`);
console.log(`url:        ${cluster.url}`);
console.log(`token:      ${cluster.token}`);
console.log(`kubeconfig: ${cluster.kubeconfigPath}`);
console.log(`logs:       ${cluster.dir}/{etcd,kube-apiserver}.log`);
console.log("Ctrl-C to stop.");

const keepAlive = setInterval(() => {}, 1 << 30);
let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  console.log("\nstopping…");
  await cluster.stop();
  clearInterval(keepAlive);
  process.exit(0);
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
