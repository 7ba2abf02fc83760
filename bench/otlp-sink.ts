// A trace receiver for bench/tracing.ts, in a process of its own (its CPU is not the operator's):
// accepts OTLP/HTTP JSON on 127.0.0.1, prints {"port"} on start and {"spans"} when told "stop".

const counted = { spans: 0 };
const server = Bun.serve({
  hostname: "127.0.0.1", port: 0,
  async fetch(request) {
    const body = (await request.json()) as { resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[] };
    for (const r of body.resourceSpans ?? []) for (const s of r.scopeSpans ?? []) counted.spans += s.spans?.length ?? 0;
    return Response.json({});
  },
});
console.log(JSON.stringify({ port: server.port }));
for await (const chunk of Bun.stdin.stream()) {
  if (new TextDecoder().decode(chunk).includes("stop")) break;
}
console.log(JSON.stringify(counted));
await server.stop(true);
export {};
