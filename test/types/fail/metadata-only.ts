// A token made with { metadataOnly: true } types its handlers' objects as metadata only:
// reading the spec does not compile (issue 20).
import { on, resource, type Pod } from "kobun";

const Pods = resource("v1/pods", { metadataOnly: true, alias: "pods" });
on.event(Pods, ({ body, meta, labels }) => {
  void meta.name;
  void labels.app;
  void body.metadata.uid;
  void body.spec; // error TS2339
});
// ctx.spec and ctx.status throw when read (not received): reading them does not compile either.
on.create(Pods, (ctx) => {
  void ctx.spec.containers; // error TS2339
  void ctx.status.phase; // error TS2339
});

// Naming the kind does not bring the spec back: the handlers still get metadata only.
const NamedPods = resource<Pod>("v1/pods", { metadataOnly: true });
on.event(NamedPods, ({ body }) => {
  void body.metadata.name;
  void body.spec; // error TS2339
});
