// What the runtime and `kobun manifests` read off the registrations, by selector text: which
// resources to watch, which are only read (RBAC get/list/watch), which CRDs were defined in code,
// and which children handlers and reconciles write (RBAC as for the handled resources).

import { parseSelector, type KubeObject, type ResourceSelector } from "../kube/index.ts";
import { definitionOf } from "./definition.ts";
import type { Reconciles } from "./reconciles.ts";
import { distinctSelectors } from "./registration.ts";
import type { BackgroundSpec } from "./kinds/background.ts";
import type { HandlerSpec } from "./kinds/handlers.ts";
import type { IndexSpec } from "./kinds/indexing.ts";
import type { WebhookSpec } from "./kinds/webhooks.ts";

/** A Registry's lists, as these functions read them. */
export interface Registrations {
  handlers: readonly HandlerSpec[];
  background: readonly BackgroundSpec[];
  indexes: readonly IndexSpec[];
  webhooks: readonly WebhookSpec[];
  reconciles: Reconciles;
}

/** Every resource something is registered for, an index reads, or a reconcile needs, once each. */
export function watchedSelectors(r: Registrations): ResourceSelector[] {
  return distinctSelectors([
    ...r.handlers.map((spec) => spec.selector), ...r.background.map((spec) => spec.selector),
    // The runtime watches what the indexes need, handled or not, and what the reconciles read.
    ...r.indexes.map((spec) => spec.selector), ...r.reconciles.selectors(),
  ], textOf, "last");
}

/** The resources watched only to be read: nothing handles, reconciles or owns them. */
export function readOnlySelectors(r: Registrations): ResourceSelector[] {
  const acted = new Set([
    ...r.handlers.map((spec) => spec.selector), ...r.background.map((spec) => spec.selector),
    ...r.reconciles.specs.map((spec) => spec.selector), ...r.reconciles.owned(),
  ].map(textOf));
  const read = [...r.indexes.map((spec) => spec.selector), ...r.reconciles.watched()];
  return distinctSelectors(read.filter((selector) => !acted.has(textOf(selector))), textOf, "last");
}

/** The CRDs of the resources defined with defineResource that anything was registered for, indexes and owns too. */
export function definedCRDs(r: Registrations): KubeObject[] {
  const seen = new Map<string, KubeObject>();
  const registered = [...r.handlers, ...r.background, ...r.webhooks, ...r.indexes];
  for (const selector of [...registered.map((spec) => spec.selector), ...r.reconciles.selectors()]) {
    const crd = definitionOf(selector);
    if (crd) seen.set(crd.metadata.name!, crd);
  }
  return [...seen.values()];
}

/** The children handlers declare and reconciles own, keyed by group and name (RBAC grants every version at once). */
export function childSelectors(r: Registrations): ResourceSelector[] {
  const declared = [
    ...[...r.handlers, ...r.background].flatMap((spec) => spec.options.children ?? []),
    ...r.reconciles.specs.flatMap((spec) => spec.children),
  ];
  const groupAndName = (selector: ResourceSelector) => {
    const { group, name } = parseSelector(selector);
    return `${group ?? ""}|${name}`;
  };
  return distinctSelectors([...declared, ...r.reconciles.owned()], groupAndName, "first");
}

function textOf(selector: ResourceSelector): string {
  return parseSelector(selector).text;
}
