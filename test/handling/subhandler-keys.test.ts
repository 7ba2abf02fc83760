// Sub-handler ids that would share one progress record (annotation keys sanitise ids: "a b" and
// "a.b" both become kobun.dev/p.a.b) are refused, naming both, instead of one being taken as done
// while the other still retries; a handler id with "/" (a sub-handler's form) is refused at registration.

import { afterEach, describe, expect, test } from "bun:test";
import { TemporaryError } from "../../src/declaring/errors.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { progressKey } from "../../src/handling/progress.ts";
import { startHarness, type Harness } from "./harness.ts";

const PLAIN = "kobunplains.kobun.dev/v1"; // no status subresource: progress in annotations
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

function recordOf(obj: any, id: string): any {
  const text = obj?.metadata?.annotations?.[progressKey(id)];
  return text === undefined ? undefined : JSON.parse(text);
}

describe("sub-handler progress keys", () => {
  for (const [items, clash] of [
    [["a b", "a.b"], "\"p/a b\""], // siblings mapping to one key
    [["-"], "\"p\""], // the parent's own key
    [["x"], "\"p.x\""], // a registered handler's key
  ] as const) {
    test(`refused, naming both: ${items.join(" + ")} against ${clash}`, async () => {
      const registry = new Registry();
      const attempts: string[] = [];
      registry.on.create(PLAIN, (ctx) => {
        for (const item of items) {
          ctx.subhandler(item, ({ retry }) => {
            attempts.push(`${item}#${retry}`);
            h?.poke();
            if (retry < 1) throw new TemporaryError("not yet", { delay: 0.05 });
          });
        }
      }, { id: "p" });
      registry.on.create(PLAIN, () => {}, { id: "p.x" });
      h = await startHarness({ registry, plain: true, settings: { handling: { retries: null } } });
      await h.client.create(h.resource, "default", {
        apiVersion: "kobun.dev/v1", kind: "KobunPlain", metadata: { name: "keys", namespace: "default" }, spec: {},
      });
      const parent = await h.until(() => recordOf(h!.get("keys"), "p")?.failure && recordOf(h!.get("keys"), "p"));
      const last = items[items.length - 1]!;
      expect(parent.message).toContain(`ctx.subhandler(${JSON.stringify(last)})`);
      expect(parent.message).toContain(`"p/${last}"`);
      expect(parent.message).toContain(clash);
      expect(attempts).toEqual([]); // the call failed: none of its sub-handlers ran
    });
  }
});

test("a handler id with \"/\" is refused at registration (it could be a sub-handler's full id)", () => {
  const registry = new Registry();
  expect(() => registry.on.create(PLAIN, () => {}, { id: "p/a" })).toThrow(
    expect.objectContaining({ name: "RegistrationError", message: expect.stringContaining('"p/a"') }),
  );
  expect(() => registry.on.create(PLAIN, () => {}, { id: "p" })).not.toThrow();
});
