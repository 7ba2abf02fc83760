// The garbage collector of kube-controller-manager, as far as ownerReferences go: once every
// owner of an object is gone, the object is deleted (in the background); an owner deleted
// with propagationPolicy Foreground (finalizer "foregroundDeletion") first has its dependents
// deleted and disappears once none of them with blockOwnerDeletion is left; Orphan
// (finalizer "orphan") removes the owner's references from its dependents, then lets it go.
// Like the real one it runs after the write that caused it, not inside it (a microtask
// later), so a watch sees the owner's deletion before its children's.
// Owners are found by uid, as the real collector does; an index keeps it O(dependents).

import type { ChangeEvent, Store } from "./store.ts";

export const FOREGROUND = "foregroundDeletion";
export const ORPHAN = "orphan";

interface Where {
  res: string;
  ns: string;
  name: string;
}

/** What the collector needs of Objects: deleting with a policy, and writing metadata. */
export interface Collectable {
  deleteWithPolicy(res: string, ns: string, name: string, policy: "Background" | "Foreground"): void;
  writeMetadata(res: string, ns: string, name: string, change: (meta: any) => void): void;
}

/** `run(key)` for each key given, a microtask later, once per key however often it was given meanwhile */
export function batched(run: (key: string) => void): (key: string) => void {
  const due = new Set<string>();
  let scheduled = false;
  return (key) => {
    due.add(key);
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(() => {
      scheduled = false;
      const keys = [...due];
      due.clear();
      for (const k of keys) run(k);
    });
  };
}

export class GarbageCollector {
  /** Every stored object by uid: is an owner still there? */
  private readonly alive = new Map<string, Where>();
  /** owner uid → the dependents that name it ("res|ns|name" → where). */
  private readonly dependents = new Map<string, Map<string, Where>>();
  /** an owner to look at, a microtask after the write that made it due (once however many writes) */
  private readonly schedule = batched((uid) => this.collect(uid));
  /** A deleted owner's namespace ("" cluster-scoped), until its dependents are looked at. */
  private readonly goneIn = new Map<string, string>();

  constructor(
    private readonly store: Store,
    private readonly objects: Collectable,
  ) {
    store.subscribe((event) => this.observe(event));
  }

  private observe(event: ChangeEvent): void {
    const meta = event.object?.metadata;
    const uid: string | undefined = meta?.uid;
    if (!uid) return;
    const where = { res: event.res, ns: event.ns, name: meta.name };
    const key = `${where.res}|${where.ns}|${where.name}`;
    const before = (event.prev?.metadata?.ownerReferences ?? []) as { uid?: string }[];
    for (const ref of before) if (ref.uid) this.dependents.get(ref.uid)?.delete(key);
    if (event.type === "DELETED") {
      this.alive.delete(uid);
      if (this.dependents.has(uid)) {
        this.goneIn.set(uid, where.ns);
        this.schedule(uid);
      }
      // A dependent gone may unblock an owner being deleted in the foreground.
      for (const ref of before) if (ref.uid) this.schedule(ref.uid);
      return;
    }
    this.alive.set(uid, where);
    for (const ref of (meta.ownerReferences ?? []) as { uid?: string }[]) {
      if (!ref.uid) continue;
      let deps = this.dependents.get(ref.uid);
      if (!deps) this.dependents.set(ref.uid, (deps = new Map()));
      deps.set(key, where);
      if (!this.alive.has(ref.uid)) this.schedule(ref.uid); // created pointing at an owner already gone
    }
    const finalizers: string[] = meta.finalizers ?? [];
    if (meta.deletionTimestamp && (finalizers.includes(FOREGROUND) || finalizers.includes(ORPHAN))) this.schedule(uid);
    // A reference dropped (orphaned) may unblock its owner too.
    if (before.length && before.length !== (meta.ownerReferences ?? []).length) {
      for (const ref of before) if (ref.uid) this.schedule(ref.uid);
    }
  }

  private collect(ownerUid: string): void {
    const owner = this.alive.get(ownerUid);
    const ownerBody = owner && this.store.get(owner.res, owner.ns, owner.name);
    const finalizers: string[] = ownerBody?.metadata?.deletionTimestamp ? (ownerBody.metadata.finalizers ?? []) : [];
    if (owner && !finalizers.includes(ORPHAN) && !finalizers.includes(FOREGROUND)) return; // alive: nothing to collect
    const ownerNs = owner?.ns ?? this.goneIn.get(ownerUid) ?? "";
    this.goneIn.delete(ownerUid);
    const all = [...(this.dependents.get(ownerUid)?.values() ?? [])];
    if (finalizers.includes(ORPHAN)) {
      for (const d of all) this.safely(() => this.objects.writeMetadata(d.res, d.ns, d.name, (m) => {
        const kept = (m.ownerReferences ?? []).filter((r: any) => r.uid !== ownerUid);
        if (kept.length) m.ownerReferences = kept; else delete m.ownerReferences; // omitempty: no `[]` stored
      }));
      this.dependents.delete(ownerUid);
      this.dropFinalizer(owner!, ORPHAN);
      return;
    }
    // A cluster-scoped dependent of a namespaced owner: the real collector finds the reference invalid
    // (OwnerRefInvalidNamespace) and never deletes that dependent, nor waits for it.
    const deps = all.filter((d) => d.ns !== "" || ownerNs === "");
    if (finalizers.includes(FOREGROUND)) {
      let blocking = 0;
      for (const d of deps) {
        const body = this.store.get(d.res, d.ns, d.name);
        if (!body) continue;
        const refs: any[] = body.metadata.ownerReferences ?? [];
        if (refs.some((r) => r.uid === ownerUid && r.blockOwnerDeletion)) blocking++;
        if (!body.metadata.deletionTimestamp) {
          this.safely(() => this.objects.deleteWithPolicy(d.res, d.ns, d.name, "Foreground"));
        }
      }
      if (blocking === 0) this.dropFinalizer(owner!, FOREGROUND);
      return;
    }
    for (const d of deps) {
      const body = this.store.get(d.res, d.ns, d.name);
      if (!body || body.metadata.deletionTimestamp) continue;
      const refs: any[] = body.metadata.ownerReferences ?? [];
      if (refs.every((r) => !this.alive.has(r.uid))) {
        this.safely(() => this.objects.deleteWithPolicy(d.res, d.ns, d.name, "Background"));
      } else {
        // Other owners remain: only the dangling reference goes, as the real collector does.
        const kept = refs.filter((r) => this.alive.has(r.uid));
        this.safely(() => this.objects.writeMetadata(d.res, d.ns, d.name, (m) => (m.ownerReferences = kept)));
      }
    }
    this.dependents.delete(ownerUid);
  }

  /** The owner's deletion finalizer goes once its dependents are dealt with. */
  private dropFinalizer(owner: Where, finalizer: string): void {
    this.safely(() => this.objects.writeMetadata(owner.res, owner.ns, owner.name, (m) => {
      m.finalizers = m.finalizers.filter((f: string) => f !== finalizer);
    }));
  }

  /** The collector must never break a write: a raced object (already gone, changed) is skipped. */
  private safely(fn: () => void): void {
    try {
      fn();
    } catch {
      // gone meanwhile, or refused: the next change of it schedules another look
    }
  }
}
