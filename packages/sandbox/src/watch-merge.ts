// `faults.mergeWatches`: intermediate states lost. While the rule holds, the live events of the
// matching resources are kept back per object on every open watch, only the latest state of each
// kept; `releaseMerged()` sends what is kept, one event per object, in resourceVersion order. A
// controller then sees Pending → Done where the store went Pending → Running → Done: what an
// informer sees after a relist, or when it falls behind (the Sieve paper's unobserved states).
// Bookmarks are not sent while a stream keeps events (one would carry the client past them), nor
// on a stream of the resource the rule holds; other streams send theirs as usual. On release, each
// stream that kept anything gets a BOOKMARK after its events (if its client asked for bookmarks):
// a real watch delivers every event, so its client's version reaches the newest one even when the
// merge swallowed it (an object made and deleted unseen); without it, what waits for the stream to
// pass a version (kobun's read-your-own-writes overlay of a write the merge swallowed) would wait
// for the next event or periodic bookmark, which a real server would not have made it wait for.

/** What a kept event is sent back into (watch.ts's WatchStream; named by its one use, not imported back). */
interface WatchStream {
  readonly plural: string;
  deliver(type: string, object: any): void;
  /** a BOOKMARK at the store's version now (`initialEnd` false), if the client asked for bookmarks */
  sendBookmark(initialEnd: boolean): void;
}

/** `gone`: an object deleted and then made again under its name while kept: its DELETED goes first */
interface Kept { type: string; object: any; gone?: any }

export class WatchMerges {
  private rule: { plural?: string; namespace?: string } | undefined;
  private readonly kept = new Map<WatchStream, Map<string, Kept>>();

  set(match: { plural?: string; namespace?: string }): void {
    this.rule = { ...match };
  }

  /** keeps the event back if the rule holds for it; false: send it as usual */
  hold(stream: WatchStream, plural: string, type: string, object: any): boolean {
    const rule = this.rule;
    if (rule === undefined || (rule.plural !== undefined && rule.plural !== plural)) return false;
    const namespace = object?.metadata?.namespace ?? "";
    if (rule.namespace !== undefined && rule.namespace !== namespace) return false;
    let objects = this.kept.get(stream);
    if (objects === undefined) this.kept.set(stream, (objects = new Map()));
    const key = `${namespace}/${object?.metadata?.name}`;
    const before = objects.get(key);
    // Made again under its name (a new uid): a watch never turns one object into another, so the
    // old one's deletion is kept to be sent before the new one, as a relist would tell it.
    const recreated = before?.type === "DELETED" && type === "ADDED" && uidOf(before.object) !== uidOf(object);
    const gone = recreated ? before!.object : before?.gone;
    const merged = recreated ? "ADDED" : mergeTypes(before?.type, type);
    if (merged === undefined) {
      if (gone === undefined) objects.delete(key);
      else objects.set(key, { type: "DELETED", object: gone }); // the new one came and went unseen
    } else objects.set(key, { type: merged, object, ...(gone !== undefined ? { gone } : {}) });
    return true;
  }

  /** whether the stream keeps events back, or may keep the next (its bookmarks are then not sent) */
  holding(stream: WatchStream): boolean {
    if ((this.kept.get(stream)?.size ?? 0) > 0) return true;
    const rule = this.rule;
    return rule !== undefined && (rule.plural === undefined || rule.plural === stream.plural);
  }

  /** ends the rule and sends every kept event, oldest resourceVersion first, then a bookmark past them all */
  release(): void {
    this.rule = undefined;
    const streams = [...this.kept];
    this.kept.clear();
    for (const [stream, objects] of streams) {
      const events = [...objects.values()].sort((a, b) => rvOf(a) - rvOf(b));
      for (const { type, object, gone } of events) {
        if (gone !== undefined) stream.deliver("DELETED", gone);
        stream.deliver(type, object);
      }
      stream.sendBookmark(false);
    }
  }

  /** a stream ended: what it kept is dropped */
  forget(stream: WatchStream): void {
    this.kept.delete(stream);
  }

  /** events kept back over all streams */
  get pending(): number {
    let n = 0;
    for (const objects of this.kept.values()) n += objects.size;
    return n;
  }
}

/** one event standing for two of the same object: undefined when they cancel out (made and gone unseen) */
function mergeTypes(before: string | undefined, after: string): string | undefined {
  if (before === undefined) return after;
  if (before === "ADDED" && after === "DELETED") return undefined;
  if (before === "ADDED") return "ADDED";
  if (before === "DELETED" && after === "ADDED") return "MODIFIED"; // the delete went unseen
  return after;
}

function uidOf(object: any): string | undefined {
  return object?.metadata?.uid;
}

function rvOf(kept: Kept): number {
  return Number(kept.object?.metadata?.resourceVersion ?? 0);
}
