// The application that embeds the operator (Kopf's main() and kopf_thread() in one): it starts
// `run()` with its own stop signal, waits for it to be ready, creates and deletes a few objects
// through the operator's own client, and stops the operator.
//
// Workaround (issue 33 adds `run({ memo })`): the memo is filled by an `on.startup` handler the
// application registers, which also hands the application the operator's client.
import { resolveSettings, run, type Api } from "kobun";
import { journal, registry } from "./handlers/example.ts";

const memo = { createTemplate: "Hello, {name}!", deleteTemplate: "Good bye, {name}!" };
let api: Api | undefined;
registry.on.startup((ctx) => {
  Object.assign(ctx.memo, memo); // issue 33: run({ memo })
  api = ctx.api;
}, { id: "app_memo" });

export async function main(kubeconfig: string, steps = 3): Promise<void> {
  journal.write("Starting the main app.");
  const stop = new AbortController();
  const settings = resolveSettings({ flags: { kubeconfig, namespaces: ["default"], standalone: true, quiet: true } });
  const ready = Promise.withResolvers<void>();
  const operator = run({ signal: stop.signal, settings, registry, onStarted: () => ready.resolve() });
  await Promise.race([ready.promise, operator.then(() => { throw new Error("the operator ended before it was ready"); })]);
  try {
    for (let step = 0; step < steps; step++) {
      journal.write(`Do the main app activity here. Step ${step + 1}/${steps}.`);
      const name = `kopf-example-${step}`;
      await api!.create({ apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name, namespace: "default" } });
      await journal.has(`Hello, ${name}!`);
      // The selector, not the KopfExamples token: ctx.api drops the namespace of a token (see 10-builtins).
      await api!.delete("kopfexamples.kopf.dev", name, { namespace: "default" });
      await journal.has(`Good bye, ${name}!`);
    }
  } finally {
    journal.write("Exiting the main app.");
    stop.abort();
    await operator;
  }
}
