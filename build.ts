// build.ts: compile the kobun runtime plus every handler module into ONE executable.
//
//   bun run build.ts [--handlers DIR] [--outfile PATH] [--target bun-linux-x64|bun-linux-arm64|...]
//
// The same as `kobun build` (src/cli/project/build.ts, which does the work), for this checkout's
// own handlers/ by default.

import { main } from "./src/cli.ts";

await main(["build", ...process.argv.slice(2)]);
