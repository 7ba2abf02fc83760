// The `on.reconcile` registrations of a Registry: at most one reconcile per resource (as one
// controller per `For` in controller-runtime), and what the runtime must watch for them: the
// reconciled resources, the ones they own (written: `kobun manifests` grants them as it grants
// handlers' children) and the ones they watch (read only).

import type { Resource, ResourceSelector } from "../kube/index.ts";
import { distinctSelectors, RegistrationError, selectorMatches } from "./registration.ts";
import { reconcileSpecOf, type ReconcileFn, type ReconcileOptions, type ReconcileSpec } from "./kinds/reconcile.ts";
import { parseSelector } from "../kube/index.ts";

export class Reconciles {
  readonly specs: ReconcileSpec[] = [];

  add(selector: ResourceSelector, fn: ReconcileFn<any>, options: ReconcileOptions<any>): ReconcileSpec {
    const spec = reconcileSpecOf(selector, fn, options);
    const twin = this.specs.find((other) => other.wanted.text === spec.wanted.text);
    if (twin) {
      throw new RegistrationError(
        `on.reconcile "${spec.id}": ${spec.wanted.text} already has a reconcile ("${twin.id}"): ` +
          "one reconcile brings a resource's objects to their state; put both in it",
      );
    }
    this.specs.push(spec);
    return spec;
  }

  /** The reconcile of a resolved resource, if it has one. */
  forResource(resource: Resource): ReconcileSpec | undefined {
    return this.specs.find((spec) => selectorMatches(spec.wanted, resource));
  }

  /** Everything the reconciles need watched: their resources, what they own, what they watch. */
  selectors(): ResourceSelector[] {
    const all = this.specs.flatMap((spec) => [spec.selector, ...spec.owns, ...spec.watches.map((w) => w.selector)]);
    return distinct(all);
  }

  /** The resources they own (written by them: RBAC as for children). */
  owned(): ResourceSelector[] {
    return distinct(this.specs.flatMap((spec) => spec.owns));
  }

  /**
   * Whether a reconcile reads `resource` through ctx.cache as a child or a watched resource: its
   * stream must have listed before any handler runs (an empty cache at start-up reads as "no child").
   */
  readsChildren(resource: Resource): boolean {
    return [...this.owned(), ...this.watched()].some((selector) => selectorMatches(parseSelector(selector), resource));
  }

  /** The resources they only watch (read). */
  watched(): ResourceSelector[] {
    return distinct(this.specs.flatMap((spec) => spec.watches.map((w) => w.selector)));
  }

  clear(): void {
    this.specs.length = 0;
  }
}

/** Distinct by selector text, the first spelling kept. */
function distinct(selectors: readonly ResourceSelector[]): ResourceSelector[] {
  return distinctSelectors(selectors, (selector) => parseSelector(selector).text, "first");
}
