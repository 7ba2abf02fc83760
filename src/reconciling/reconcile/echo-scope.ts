// The echo rule of one reconcile call (docs/reconcile.md, "What wakes a reconcile"): a write the call
// makes to an owned resource it has NOT read before (neither ctx.cache.get/list nor ctx.api.get/list/
// watch of that resource) is blind: the call's plan cannot depend on that child's state, so the watch's
// echo of exactly that write wakes no reconcile of this object (caching/own-echoes.ts keeps the answer's
// version). A write after such a read (the kubebuilder order: list the Jobs, compute the status, create
// a Job) is not blind: its echo wakes the owner as any change does, so that the next reconcile lists the
// child. Deletes are never blind (their echo always wakes). Reads of a resource named in a way the
// owned resources cannot be matched to, and any read of ctx.indexes (an index may be kept from a
// child), count as reads of every resource (the rule errs toward waking).

import type { KubeObject } from "../../kube/index.ts";
import type { EchoSettle, OwnEchoes } from "../../caching/index.ts";
import type { Api, Cache, Index, ResourceRef } from "../../declaring/index.ts";

/** An owned resource's echoes, as the rule finds them (runtime/reconcile-wiring.ts builds it). */
export interface EchoBook {
  echoes: OwnEchoes;
  namespaced: boolean;
}

/** The owned resources by the names handlers give them; `null`: not owned; `undefined`: cannot tell. */
export interface EchoBooks {
  ofRef(ref: ResourceRef): EchoBook | null | undefined;
  ofObject(object: KubeObject): EchoBook | null | undefined;
}

type Indexes = Readonly<Record<string, Index>>;

/** ctx.api, ctx.cache and ctx.indexes of one call, recording what it read so that its blind writes are known. */
export function echoScoped(
  scope: { api: Api; cache: Cache; indexes: Indexes }, books: EchoBooks,
  writer: { uid: string; namespace: string | undefined },
): { api: Api; cache: Cache; indexes: Indexes } {
  const { api, cache } = scope;
  const read = new Set<OwnEchoes>();
  let readAll = false;
  const reading = (book: EchoBook | null | undefined): void => {
    if (book === undefined) readAll = true;
    else if (book) read.add(book.echoes);
  };
  /** The settle of a blind write of `name` to `book`'s resource; undefined: not blind. */
  const blind = (book: EchoBook | null | undefined, name: string | undefined, namespace?: string | null) => {
    if (!book || readAll || read.has(book.echoes)) return undefined;
    const home = book.namespaced ? (namespace ?? writer.namespace) : undefined;
    return book.echoes.sending(name, home, writer.uid);
  };
  return {
    indexes: new Proxy(scope.indexes, {
      get(target, key) {
        readAll = true;
        return Reflect.get(target, key);
      },
    }),
    cache: {
      get: (target, name, namespace) => (reading(books.ofRef(target)), cache.get(target, name, namespace)),
      list: (target, options) => (reading(books.ofRef(target)), cache.list(target, options)),
    },
    api: {
      fieldManager: api.fieldManager,
      get: (ref, name, o) => (reading(books.ofRef(ref)), api.get(ref, name, o)),
      list: (ref, o) => (reading(books.ofRef(ref)), api.list(ref, o)),
      watch: (ref, o) => (reading(books.ofRef(ref)), api.watch(ref, o)),
      delete: (ref, name, o) => api.delete(ref, name, o),
      create: (object, o) => settled(blindObject(object), () => api.create(object, o)),
      apply: (object, o) => settled(blindObject(object), () => api.apply(object, o)),
      patch: (ref, name, patch, o) =>
        settled(blind(books.ofRef(ref), name, o?.namespace), () => api.patch(ref, name, patch, o)),
    },
  };

  function blindObject(object: KubeObject): EchoSettle | undefined {
    const meta = object?.metadata;
    return blind(books.ofObject(object), meta?.name, meta?.namespace);
  }
}

/** The write's answer (or its failure) settles a blind write's expected echo. */
async function settled<T>(settle: EchoSettle | undefined, write: () => Promise<T>): Promise<T> {
  if (!settle) return write();
  try {
    const answer = await write();
    settle(answer as KubeObject);
    return answer;
  } catch (error) {
    settle();
    throw error;
  }
}
