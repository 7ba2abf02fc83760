// e2e-only handlers for objects near the API server's size limits (test/e2e/large-objects.e2e.ts):
// Secrets labelled `e2e.kobun.dev/large=true` and KobunLarge objects (kobunlarges.e2e.kobun.dev/v1,
// with a status subresource, CRD in kobunflaky.crd.yaml). Each run logs one line the test
// counts: a handler re-run by a retry loop shows up as a second line. The update handler logs
// the diff's paths and `unknown` markers only (never values: they would be Secret data).

import { on, type HandlerContext } from "kobun";

const LABELS = { "e2e.kobun.dev/large": "true" };

on.create("secrets/v1", ({ name, logger }: HandlerContext) => {
  logger.info(`large_secret_create ran on ${name}`);
}, { id: "large_secret_create", labels: LABELS });

on.update("secrets/v1", ({ name, diff, logger }: HandlerContext) => {
  const paths = diff.map((d) => `${d.op}:${d.path.join(".")}:${d.unknown ?? "known"}`).join(",");
  logger.info(`large_secret_update ran on ${name} diff=${paths}`);
}, { id: "large_secret_update", labels: LABELS });

on.create("kobunlarges.e2e.kobun.dev/v1", ({ name, body, logger }: HandlerContext) => {
  logger.info(`large_object_create ran on ${name}`);
  return { bytes: JSON.stringify(body.spec ?? {}).length };
}, { id: "large_object_create" });
