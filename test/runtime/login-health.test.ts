// /healthz and on.login's renewals (issue 30 #8): renewals failing without a break for the
// stated bound make the "login" problem; the first request through with renewed credentials
// clears it. Against the sandbox with a real 401 (a ServiceAccount token revoked), the bound and
// the backoff shortened (the operator's are 60 s and 1 s doubling to 30 s).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { KubeClient } from "../../src/kube/client.ts";
import { loginConnection } from "../../src/kube/login.ts";
import { Health } from "../../src/observability/health.ts";
import { reportLoginRenewals } from "../../src/runtime/login-health.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { testLogger } from "../peering/helpers.ts";
import { asAdmin } from "./restricted.ts";

let sandbox: Sandbox;
let adminToken: string;
beforeAll(async () => {
  sandbox = await startSandbox({ auth: "token" });
  adminToken = (Bun.YAML.parse(sandbox.kubeconfig) as any).users[0].user.token;
});
afterAll(() => sandbox.stop());

const BOUND_MS = 400;
const serviceAccounts = "/api/v1/namespaces/default/serviceaccounts";

test("renewals failing for longer than the bound make /healthz's login problem; the first request through with renewed credentials clears it", async () => {
  await asAdmin(sandbox, adminToken, "POST", serviceAccounts, { metadata: { name: "health" } });
  let sealed = false;
  let logins = 0;
  const login = async () => {
    logins++;
    if (sealed) throw new Error("vault is sealed");
    const request = await asAdmin(sandbox, adminToken, "POST", `${serviceAccounts}/health/token`, { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} });
    return { server: sandbox.url, token: request.status.token as string };
  };
  const { logger, lines } = testLogger();
  const connection = await loginConnection(login, logger, { initialMs: 50, maxMs: 100 });
  const client = new KubeClient(connection, { requestTimeoutMs: 5000 });
  let refused = 0;
  client.observe({ requested: (_method, _host, code) => void (code === "401" && refused++) });
  const health = new Health();
  const life = new AbortController();
  reportLoginRenewals(connection, health, life.signal, BOUND_MS);
  const outcomes: string[] = [];
  const request = () => client.request("GET", "/version").then(() => outcomes.push("ok"), (error) => outcomes.push(error.message));
  try {
    await request();
    expect(outcomes).toEqual(["ok"]);
    // Revoked (its ServiceAccount recreated), and the vault that would renew it sealed.
    await asAdmin(sandbox, adminToken, "DELETE", `${serviceAccounts}/health`);
    await asAdmin(sandbox, adminToken, "POST", serviceAccounts, { metadata: { name: "health" } });
    sealed = true;
    const failingFrom = Date.now();
    // Twenty requests every 20 ms: the renewal is attempted per backoff step, not per request.
    while (health.healthy && Date.now() - failingFrom < 10_000) {
      await Promise.all(Array.from({ length: 20 }, request));
      await Bun.sleep(20);
    }
    const unhealthyAfter = Date.now() - failingFrom;
    expect(health.healthy).toBe(false);
    expect(unhealthyAfter).toBeGreaterThanOrEqual(BOUND_MS);
    expect(health.report().problems.login).toMatch(/^on\.login has failed to renew the credentials since \S+ \(\d+ attempts\): vault is sealed$/);
    // Per backoff step (50 ms, 100 ms, 100 ms ...), not per request; past the first burst (20 sent
    // at once), nothing is sent with the refused token: the requests fail at once, unsent.
    expect(logins - 1).toBeLessThanOrEqual(Math.ceil(unhealthyAfter / 100) + 2);
    expect(outcomes.length - 1).toBeGreaterThan(5 * (logins - 1));
    expect(refused).toBeLessThanOrEqual(20);
    expect(outcomes.filter((outcome) => outcome.includes("not sent with the refused credentials")).length).toBeGreaterThan(0);
    expect(lines.filter((line) => line.includes("on.login could not renew the credentials"))).toHaveLength(logins - 1);

    sealed = false;
    outcomes.length = 0;
    // The next attempt comes when its backoff step is over (at most 100 ms here): ask until then.
    const unsealedAt = Date.now();
    while (!outcomes.includes("ok") && Date.now() - unsealedAt < 5000) {
      await request();
      if (!outcomes.includes("ok")) await Bun.sleep(10);
    }
    expect(outcomes.at(-1)).toBe("ok");
    expect(health.healthy).toBe(true);
  } finally {
    life.abort();
    client.close();
  }
}, 30_000);

for (const [kind, renewal] of [
  ["throws", () => Promise.reject(new Error("vault is sealed"))],
  ["returns garbage", () => Promise.resolve({ server: 42 } as never)],
  ["names another server", () => Promise.resolve({ server: "http://127.0.0.1:1", token: "elsewhere" })],
] as const) {
  test(`a renewal that ${kind} is asked once per backoff step however many requests are refused, one ERROR line each`, async () => {
    const account = `garbage-${kind.split(" ")[0]}`;
    await asAdmin(sandbox, adminToken, "POST", serviceAccounts, { metadata: { name: account } });
    const first = await asAdmin(sandbox, adminToken, "POST", `${serviceAccounts}/${account}/token`, { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} });
    let logins = 0;
    const login = async (renewing: boolean) => {
      logins++;
      return renewing ? renewal() : { server: sandbox.url, token: first.status.token as string };
    };
    const { logger, lines } = testLogger();
    const client = new KubeClient(await loginConnection(login as never, logger, { initialMs: 100, maxMs: 100 }), { requestTimeoutMs: 5000 });
    await asAdmin(sandbox, adminToken, "DELETE", `${serviceAccounts}/${account}`); // revokes `first`
    const started = Date.now();
    let requests = 0;
    while (Date.now() - started < 500) {
      await Promise.all(Array.from({ length: 20 }, () => client.request("GET", "/version").catch(() => undefined)));
      requests += 20;
      await Bun.sleep(10);
    }
    client.close();
    // Attempts at 0, then every 100 ms at most: 6 in 500 ms (+1 for the edge), against hundreds of refused requests.
    expect(logins - 1).toBeGreaterThanOrEqual(1);
    expect(logins - 1).toBeLessThanOrEqual(7);
    expect(requests).toBeGreaterThan(10 * (logins - 1));
    expect(lines.filter((line) => line.includes("ERROR on.login could not renew the credentials"))).toHaveLength(logins - 1);
  }, 20_000);
}
