// The room table of src/: which room may import which. This is the ONE place it is written
// for the code; it follows ../shared/DESIGN.md's table ("Rooms (src/)"), and where it differs
// the reason stands beside the row. Arrows point down: a room never imports one above it.
// A room's own files may always import each other. `import type` counts like any import: a
// type names the room it comes from, and a type-only arrow up the table is the same
// tangle at compile time (it is how the per-object loop, once in handling/, came to depend on config/).

import type { InnerFace } from "./faces.ts";
import type { ForbiddenImports, KnownViolation, RoomTable } from "./import-graph.ts";

export const ROOMS: RoomTable = {
  // The floor: the task scope, the toggle, abortable waits, backoff, the logger.
  util: [],
  // The only module that speaks HTTP to the API server.
  kube: ["util"],
  // The known objects of each watched resource, one store per resource (issue 31): watching/ writes
  // it (each stream through its shelf), the rooms above read it. Below watching/ because the watch
  // is its writer, and it must not know how a watch works: kube/ for types and resourceVersion order.
  caching: ["kube", "util"],
  watching: ["caching", "kube", "util"],
  // Keys and bodies only: it must not know what a Kubernetes object is.
  queueing: ["util"],
  // Side room: posts Kubernetes Events, through kube's client.
  posting: ["kube", "util"],
  // Side room: probes and metrics are fed by the rooms above it, never the other way round.
  observability: ["util"],
  // What an operator author declares (issue 31): the registry (`on.*`), specs, the public types,
  // resource tokens, `defineResource`, filters, errors, and the interfaces a handler sees of
  // ctx.api and ctx.indexes. Only kube/ (types, selectors, kinds) and util/: it never imports an
  // engine, so the authoring API can be read, and type-checked, without one.
  declaring: ["kube", "util"],
  // The engine of one object's cycle: it runs what declaring/ registered, and implements
  // declaring/'s Api, Index and Cache (ctx.cache reads caching/'s stores).
  handling: ["declaring", "caching", "kube", "posting", "util"],
  // The per-object loop above queueing, watching, handling (issue 12).
  // caching/: the reconcile model reads known objects from the stores (issue 32).
  reconciling: ["handling", "declaring", "queueing", "watching", "caching", "kube", "posting", "util"],
  // Which shards of the hash space this replica owns, over Leases (issue 16).
  sharding: ["kube", "watching", "util"],
  // The engine of the operator-wide handlers (on.login, on.startup, on.cleanup, on.probe), out of
  // runtime/ (issue 31): runtime/ says when they run, this room runs them. Of handling/ only the
  // ApiClient their ctx.api is bound from; no settings (config/), no exit codes (runtime/'s).
  activities: ["handling", "declaring", "kube", "util"],
  // Side room: the webhook engine. Its server runs the registry's validators, mutators and
  // converters, and it registers them with the API server (declarations only: it needs no
  // per-object engine, and no settings: runtime/webhooks.ts reads them into its options).
  admission: ["declaring", "kube", "util"],
  peering: ["kube", "watching", "util"],
  config: ["util"],
  // Which watch streams run (per resource, namespace, shard, selector) and keeping them running
  // (issue 31). It reads no settings and starts no peering: runtime/ hands both in as options.
  // Of handling/ it takes only the indexes' holds (handlers wait for the first LIST of what they index).
  // Of caching/ it takes the resources' stores, and opens each stream's shelf in them.
  streams: ["kube", "watching", "caching", "handling", "sharding", "peering", "observability", "util"],
  // Side room: src/sandbox.ts, the face of the embedded API server emulator, which lives in its
  // own package (packages/sandbox, @kobun/sandbox) so that production binaries leave it out. It is
  // the independent model that kube/ and watching/ are tested against (and itself checked against
  // a real kube-apiserver), so it shares none of their code: a bug on the client side would hide
  // on the server side. imports.test.ts holds the package to importing nothing of src/, and src/
  // to reaching it only through its entry (`@kobun/sandbox`, `kobun/sandbox`: this room).
  sandbox: [],
  // "everything above" in DESIGN, and the sandbox too (not in DESIGN's row): `kobun dev`
  // wires the operator to an embedded sandbox, and cli/ may reach the sandbox only here.
  runtime: [
    "kube", "caching", "watching", "queueing", "posting", "observability", "declaring", "handling", "reconciling",
    "activities", "sharding", "admission", "peering", "streams", "config", "sandbox", "util",
  ],
  // Side room: the kit handler authors use in their own tests (`kobun/testing`); it runs a
  // whole operator against a sandbox, so it stands beside runtime/ (never imported by it).
  testing: ["runtime", "sandbox", "declaring", "config", "kube", "util"],
  // src/cli.ts and src/cli/: argument parsing and the subcommands; the work is runtime's.
  // Its sub-folders (operator/, manifests/, project/) keep apart by FORBIDDEN below. Through the
  // faces, it takes what it names from the rooms that own it (issue 31: no door files in
  // runtime/): errors and a client from kube/, the registry from declaring/, the manual freeze
  // from peering/, and what `kobun manifests` derives RBAC and webhooks from (admission/, streams/).
  cli: ["runtime", "config", "declaring", "kube", "peering", "admission", "streams"],
  // src/index.ts: the public API (`import { on } from "kobun"`): declarations, and run().
  index: ["declaring", "runtime"],
};

/**
 * The engines that run declarations, one room per kind of driver (docs/architecture.md): an object's
 * life (reconciling/), the process's (activities/), the API server's calls (admission/). Each may
 * build on handling/ (one cycle's handlers, ctx.api), never on another: a new handler kind touches
 * one engine. None reads the settings: runtime/ hands each its options.
 */
const ENGINES = ["reconciling/", "activities/", "admission/"];
const INDEPENDENT_ENGINES: ForbiddenImports[] = ENGINES.map((from) => ({
  from,
  forbidden: [...ENGINES.filter((other) => other !== from), "config/"],
  why: "the engines are independent of each other and of the settings: what they share is below them " +
    "(handling/, declaring/), what they are told comes from runtime/ as options",
}));

/**
 * Inside the cli room, its three audiences never import each other; what they share sits
 * directly in cli/ (args.ts: one flag grammar; handlers.ts: the handlers, loaded or carried).
 * Inside reconciling/, the engine of daemons and timers (daemons/) stands apart from the loop
 * that drives it and from on.reconcile; on.reconcile's engine (reconcile/) plans, and leaves the
 * tracking, the life and the writing to the loop.
 */
export const FORBIDDEN: readonly ForbiddenImports[] = [
  ...INDEPENDENT_ENGINES,
  {
    from: "reconciling/daemons/",
    forbidden: [
      "reconciling/reconcile/", "reconciling/reconciler.ts", "reconciling/life.ts", "reconciling/next-step.ts",
      "reconciling/tracked.ts", "reconciling/finalizer.ts",
    ],
    why: "daemons and timers run beside an object's cycles, in phases of their own (background-phases.ts): the " +
      "Reconciler starts and stops them; of reconciling/ they take only its options and the fenced writes",
  },
  {
    from: "reconciling/reconcile/",
    forbidden: [
      "reconciling/life.ts", "reconciling/tracked.ts", "reconciling/ownership.ts", "reconciling/patching.ts",
      "reconciling/fence.ts", "reconciling/refusal.ts", "reconciling/unwatched.ts", "reconciling/tracing.ts",
    ],
    why: "on.reconcile's engine plans one call and its writes (a CyclePlan, as handling/ does for Kopf-style handlers): " +
      "the per-object loop tracks the objects, decides their life and writes the plans, fenced; the engine does none of it",
  },
  {
    from: "cli/operator/",
    forbidden: ["cli/project/", "cli/manifests/"],
    why: "a compiled operator runs these commands: the tools that need the package and Bun's bundler, and the YAML printer, stay out of them",
  },
  {
    from: "cli/manifests/",
    forbidden: ["cli/project/", "cli/operator/"],
    why: "the manifests are rendered from the settings and the handlers (by a compiled operator too), never by running the operator or the project tools",
  },
  {
    from: "cli/project/",
    forbidden: ["cli/operator/", "cli/manifests/"],
    why: "the project tools write, build and test a project; the entry build.ts generates names cli/operator/loading.ts by path, for the bundler, not by import",
  },
];

/**
 * Imports that break the table today and go away with a named later step. The test fails
 * when an entry no longer matches an import, so this list can only shrink.
 */
export const KNOWN_VIOLATIONS: readonly KnownViolation[] = [];

/** Bare specifiers that point back into src/ (tsconfig `paths`, package.json `exports`). */
export const ALIASES: Record<string, string> = {
  kobun: "index.ts", "kobun/sandbox": "sandbox.ts", "@kobun/sandbox": "sandbox.ts", "kobun/testing": "testing/index.ts",
};

/**
 * Inner files other rooms may import directly, beside the room's face (faces.ts): each is kept
 * out of the face because importing the face would load what this file's importers must not
 * load. The test fails when one is no longer imported from another room, so the list only shrinks.
 */
export const INNER_FACES: readonly InnerFace[] = [
  {
    file: "runtime/exits.ts",
    why: "src/cli.ts maps every way of ending to an exit code before it knows the command: through runtime's face, " +
      "`kobun --version` or `kobun init` would load the whole operator first (+20 ms, +3 MB measured)",
  },
  {
    file: "runtime/dev.ts",
    why: "it carries the sandbox (@kobun/sandbox): only `kobun dev` and the test kit load it, so that `kobun run` never does " +
      "and `kobun build` can leave it out",
  },
];
