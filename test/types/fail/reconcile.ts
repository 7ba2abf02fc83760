// Must NOT typecheck: a reconcile's context and each `watches` map are typed (a map's object was `any`).
import { Registry, resource } from "kobun";
import { Defined, Examples } from "../example.ts";

const { on } = new Registry();

on.reconcile(Examples, (ctx) => {
  void ctx.spec.colour; // error TS2339: no such spec field
  ctx.patch.status.count = "three"; // error TS2322: wrong patch type
  void ctx.cache.get(resource.configmaps, "x")?.spec; // error TS2339: a ConfigMap has no spec
}, {
  watches: [
    { resource: resource.secrets, map: (secret) => ({ name: secret.spec }) }, // error TS2339: a Secret has no spec
    { resource: Defined, map: (d) => ({ name: d.spec.size }) }, // error TS2322: a name is a string
    { resource: "configmaps", map: (cm) => ({ name: cm.data?.x ?? cm.status }) }, // error TS2339: no status either
  ],
});
