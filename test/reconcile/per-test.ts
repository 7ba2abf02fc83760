// One operated world per test, stopped after it (and before the next one a test opens).

import { afterEach } from "bun:test";
import type { Registry } from "../../src/declaring/index.ts";
import { world, type World } from "./fixtures.ts";

export type Operated = World & { operate(registry: Registry, file?: object): Promise<void> };

/** Called at a test file's top level: `open()` stops the world open, if any, and starts a new one. */
export function worldPerTest(): () => Promise<Operated> {
  let open: Operated | undefined;
  afterEach(async () => {
    await open?.stop();
    open = undefined;
  });
  return async () => {
    await open?.stop();
    open = undefined;
    return (open = await world());
  };
}
