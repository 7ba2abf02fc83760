// Must NOT typecheck: each marked line is an error of that code (the type test checks which).
import { Registry, resource } from "kobun";
import { Defined, Examples } from "../example.ts";

const { on } = new Registry();

on.create(Examples, (ctx) => {
  void ctx.spec.colour; // error TS2339: no such spec field
  ctx.patch.status.count = "three"; // error TS2322: wrong patch type
  ctx.patch.spec.size = "big"; // error TS2322: wrong patch type
  ctx.patch.spec.backup = { schedule: 5 }; // error TS2322: wrong nested patch type
  const greeting: number | undefined = ctx.status.greeting; // error TS2322: status field has another type
  void greeting;
});

on.field(Examples, { field: "spec.nope" }, () => undefined); // error TS2322: no such field path

on.field(Examples, { field: "spec.size" }, (ctx) => {
  const next: string | undefined = ctx.new; // error TS2322: the field is a number
  void next;
});

on.validate(Examples, (ctx) => void ctx.object.spec.colour); // error TS2339: webhooks are typed too

on.daemon(Examples, (ctx) => void ctx.spec.colour); // error TS2339: daemons are typed
on.timer(Examples, (ctx) => {
  ctx.patch.status.greeting = 1; // error TS2322: a timer's patch is typed
}, { interval: 1 });

on.create(resource.pods, (ctx) => {
  ctx.patch.spec.replicas = 3; // error TS2339: pods have no replicas
  const started: Date | undefined = ctx.status.startTime; // error TS2322: timestamps are strings on the wire
  void started;
});

on.create(Defined, (ctx) => {
  ctx.patch.spec.mode = "sometimes"; // error TS2322: not one of the schema's literals
  void ctx.spec.colour; // error TS2339: not in the schema
});

on.create(Examples, () => undefined, { field: "spec.nope" }); // error TS2322: field filters take the typed paths
on.create(Examples, () => undefined, { labels: { app: (v, ctx) => ctx.spec.colour === v } }); // error TS2339: typed context
