// The `reconcile:` block of kobun.yaml: how `on.reconcile` handlers read and retry. Used only
// when the handlers register one (docs/reconcile.md).

import { duration, flag, section } from "./fields.ts";

export const RECONCILE_SECTION = section("Reconcile: how on.reconcile handlers read their cache and retry.", {
  readOwnWrites: flag({
    default: true,
    doc: "Reads are never staler than this operator's own writes: a woken reconcile waits for the cache to " +
      "catch up with its last write to the object (catchUp), and ctx.cache shows its writes at once.",
  }),
  catchUp: duration({
    default: 5, min: 0, max: 300,
    doc: "How long a reconcile waits for the cache to catch up with our own write before reading the object " +
      "from the API server.",
  }),
  quietEchoes: flag({
    default: true,
    doc: "The watch's echo of a child write that a reconcile made without reading that resource first (apply " +
      "the children, then write the status) does not wake its owner again; false: every echo wakes it, as in " +
      "controller-runtime (docs/reconcile.md).",
  }),
  backoff: section("The backoff of a failing reconcile, per object (controller-runtime's defaults), reset by " +
    "a success.", {
    initial: duration({ default: 0.005, min: 0.001, max: 3600, doc: "The wait after the first failure; it doubles." }),
    max: duration({ default: 1000, min: 0.001, max: 86400, doc: "The longest wait between two attempts." }),
  }),
});
