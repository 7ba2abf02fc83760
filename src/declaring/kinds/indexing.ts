// Indexes (on.index): what the index function sees and takes, the spec the registry keeps of
// each, and its `on.*` function. handling/ keeps them from each resource's watch; handlers read
// them as `ctx.indexes` (indexes.ts: what they see of one).

import { parseSelector, type KubeObject, type ResourceSelector } from "../../kube/index.ts";
import type { Aliases } from "../aliases.ts";
import type { MetaMatchers, ValueMatcher } from "../filters.ts";
import type { IndexEntries } from "../indexes.ts";
import { checkOptionNames, everyKeyOf, filterField, shownSelector, type Wanted } from "../registration.ts";
import type { FieldPath, ObjectContext } from "../types.ts";

/**
 * Returns the object's entries in the index: { key: value, ... }, or, for keys that are not strings (tuples:
 * `[namespace, name]`), a Map or a list of [key, value] pairs; nothing leaves the object out.
 */
export type IndexFn<T extends object = KubeObject> = (ctx: ObjectContext<T>) => IndexEntries | undefined | null | void;

/** Options of on.index (docs/indexes.md). */
export interface IndexOptions<T extends object = KubeObject> {
  /** Names the index: handlers read `ctx.indexes.<id>`. Default: the function name. */
  id?: string;
  labels?: MetaMatchers<ObjectContext<T>>;
  annotations?: MetaMatchers<ObjectContext<T>>;
  when?: (ctx: ObjectContext<T>) => boolean;
  /** Only objects that have this field, or where it matches `value`. */
  field?: FieldPath<T> | readonly string[];
  value?: ValueMatcher<ObjectContext<T>>;
}

/** An in-memory index kept from a resource's watch stream (handling/indexes.ts). */
export interface IndexSpec {
  id: string;
  selector: ResourceSelector;
  wanted: Wanted;
  fn: IndexFn;
  options: IndexOptions;
  /** The `field` filter as a path. */
  field?: string[];
}

const OPTION_NAMES = everyKeyOf<IndexOptions>()(["id", "labels", "annotations", "when", "field", "value"]);

/** on.index, recording into `store`. */
export function indexOn(store: { indexes: IndexSpec[]; aliases: Aliases }) {
  return {
    index: (selector: ResourceSelector, fn: IndexFn, options: IndexOptions = {}) => {
      if (typeof fn !== "function") throw new Error(`on.index(${shownSelector(selector)}, ...) needs a function`);
      const wanted = parseSelector(selector);
      checkOptionNames(`on.index(${shownSelector(selector)})`, options, OPTION_NAMES);
      const id = options.id ?? (fn.name && fn.name !== "anonymous" ? fn.name : undefined);
      if (!id) {
        throw new Error(
          `on.index(${shownSelector(selector)}, ...): name the index (a named function, or { id }): ` +
            "handlers read it as ctx.indexes.<id>",
        );
      }
      if (store.indexes.some((i) => i.id === id)) {
        throw new Error(`an index with id ${JSON.stringify(id)} is already registered: pass a distinct { id }`);
      }
      const field = filterField(`index ${id}`, options);
      store.aliases.note(selector);
      store.indexes.push({ id, selector, wanted, fn, options, ...(field ? { field } : {}) });
      return fn;
    },
  };
}
