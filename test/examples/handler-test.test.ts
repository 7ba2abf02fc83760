// The README's "Testing your handlers" example, kept runnable here so the docs cannot rot.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { run, resolveSettings } from "kobun";
import { startSandbox, type Sandbox } from "kobun/sandbox";
import "../../handlers/example.ts"; // registers create_fn, update_fn, delete_fn

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox(); // a real API server on 127.0.0.1, with its own kubeconfig
  const crd = Bun.YAML.parse(await Bun.file(new URL("../../handlers/kobunexample.crd.yaml", import.meta.url)).text());
  await fetch(`${sandbox.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(crd),
  });
});
afterAll(() => sandbox.stop());

test("create_fn greets the new object", async () => {
  const stop = new AbortController();
  const settings = resolveSettings({ flags: { kubeconfig: sandbox.kubeconfigPath, namespaces: ["default"], standalone: true, quiet: true } });
  const operator = run({ signal: stop.signal, settings });
  await fetch(`${sandbox.url}/apis/kobun.dev/v1/namespaces/default/kobunexamples`, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: "hello" }, spec: { size: 1 } }),
  });
  const url = `${sandbox.url}/apis/kobun.dev/v1/namespaces/default/kobunexamples/hello`;
  let status: any;
  for (let i = 0; i < 200 && !status?.create_fn; i++, await Bun.sleep(10)) status = ((await (await fetch(url)).json()) as { status?: any }).status;
  expect(status.create_fn).toEqual({ message: "hello hello" });
  stop.abort();
  await operator; // settles only when every watch, handler and timer of the operator has ended
});
