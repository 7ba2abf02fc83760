// The log's last lines survive the exit: kobun exits with process.exit() as soon as run()
// settled, and Bun drops what it still buffers for a pipe whose reader is behind (a busy log
// collector), so the operator's final "stopped" line went missing. stderrSink writes each
// line to the file descriptor before returning, as Go's and Python's loggers do.

import { expect, test } from "bun:test";
import { join } from "node:path";

test("the last log line written before process.exit() reaches a slow reader of stderr", async () => {
  for (let run = 0; run < 3; run++) {
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "fixtures/log-then-exit.ts")], { stdout: "ignore", stderr: "pipe" });
    // The reader is behind: the pipe fills and the writer has more than it can take at once.
    await Bun.sleep(300);
    const text = await new Response(child.stderr).text();
    expect(await child.exited).toBe(0);
    const lines = text.trimEnd().split("\n");
    expect(lines).toHaveLength(20_001);
    expect(lines.at(-1)).toContain("stopped");
  }
}, 15_000);
