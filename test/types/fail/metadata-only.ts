// A token made with { metadataOnly: true } types its handlers' objects as metadata only:
// reading the spec does not compile (issue 20).
import { on, resource } from "kobun";

const Pods = resource("v1/pods", { metadataOnly: true, alias: "pods" });
on.event(Pods, ({ body, meta, labels }) => {
  void meta.name;
  void labels.app;
  void body.metadata.uid;
  void body.spec; // error TS2339
});
