// The application that embeds the operator (Kopf's main() and kopf_thread() in one): it starts
// `run()` with its own stop signal and memo, waits for it to be ready (`onReady`, Kopf's
// ready_flag), creates and deletes a few objects, and stops the operator. The application and the
// operator write to one log, the sink the application gives (Kopf's example prints to one stdout).
import { KopfExamples } from "../kopf.ts";
import { Logger, resolveSettings, run, type Api, type LogSink } from "kobun";
import { registry } from "./handlers/example.ts";

export const memo = { createTemplate: "Hello, {name}!", deleteTemplate: "Good bye, {name}!" };

// kobun exports no client of its own outside an operator: the application borrows the operator's.
let api: Api | undefined;
registry.on.startup((ctx) => { api = ctx.api; }, { id: "app_client" });

/** Waits after each change until the operator has handled it: by default a second, as Kopf's example sleeps. */
type Heard = (message: string) => Promise<unknown>;
const aSecond: Heard = () => Bun.sleep(1000);

/** The application: `sink` takes its and the operator's lines; `heard` waits until a handler said `message`. */
export async function main(kubeconfig: string, sink: LogSink, heard = aSecond, steps = 3): Promise<void> {
  const log = new Logger(sink);
  log.info("Starting the main app.");
  const stop = new AbortController();
  const settings = resolveSettings({ flags: { kubeconfig, namespaces: ["default"], standalone: true } });
  const ready = Promise.withResolvers<void>();
  const operator = run({ signal: stop.signal, settings, registry, logger: log, memo, onReady: () => ready.resolve() });
  await Promise.race([ready.promise, operator.then(() => { throw new Error("the operator ended before it was ready"); })]);
  try {
    for (let step = 0; step < steps; step++) {
      log.info(`Do the main app activity here. Step ${step + 1}/${steps}.`);
      const name = `kopf-example-${step}`;
      await api!.create({ apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name, namespace: "default" } });
      await heard(`Hello, ${name}!`); // Kopf's example sleeps a second instead
      await api!.delete(KopfExamples, name, { namespace: "default" });
      await heard(`Good bye, ${name}!`);
    }
  } finally {
    log.info("Exiting the main app.");
    stop.abort();
    await operator;
  }
}
