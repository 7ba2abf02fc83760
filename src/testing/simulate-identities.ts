// Uids are new in every run, and so is every value that repeats one: an object's own uid in its
// labels (a Job's controller-uid), a parent's uid in a child's label (zookeeper-operator's PVC `uid`
// label), a claim's uid in a volume's name (`pvc-<uid>`). The comparison with the reference run
// reads each uid of an object of the run, wherever a string holds it, as that object's identity
// (resource, namespace, name; a generated name as its prefix), in both runs: a child labelled with
// its parent's uid compares equal, one labelled with a deleted parent's uid (an old incarnation kept
// for a new one) does not.

import type { Sandbox } from "@kobun/sandbox";

/** a uid as kube-apiserver (and the sandbox) makes it: a UUID, which no other word of an object looks like */
const UID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

interface Names { namespace?: string; name?: string; generateName?: string }

/** an object's name as runs compare it: a generated one as "<generateName>*" */
export function shownName({ name, generateName }: Names): string | undefined {
  return generateName && name?.startsWith(generateName) ? `${generateName}*` : name;
}

/** an object's identity in a comparison: "plural namespace/name" (its name as `shownName`) */
export function identityOf(plural: string, metadata: Names): string {
  return `${plural} ${metadata.namespace ? `${metadata.namespace}/` : ""}${shownName(metadata)}`;
}

/** the uid of every object the run made (heard at each write), for uids of objects gone by the end */
export class RunUids {
  private readonly made = new Map<string, string>();

  constructor(private readonly sandbox: Sandbox) {
    sandbox.faults.clients.onWrite((write) => {
      if (write.failed !== undefined || write.verb === "delete") return;
      const { group, plural, namespace, name } = write;
      const object = sandbox.store.get(group, plural, namespace || undefined, name);
      const uid = object?.metadata?.uid;
      if (typeof uid === "string" && !this.made.has(uid)) this.made.set(uid, identityOf(plural, object.metadata));
    });
  }

  /**
   * what each uid reads as: an object there at the end (of `present`, or a Namespace: a cluster's id is often
   * kube-system's uid) by its identity, one gone by then as a deleted one of that identity
   */
  words(present: ReadonlyMap<string, string>): Map<string, string> {
    const words = new Map<string, string>();
    for (const [uid, identity] of this.made) words.set(uid, `(the uid of a deleted ${identity})`);
    for (const namespace of this.sandbox.store.objects("", "namespaces")) {
      words.set(namespace.metadata.uid, `(the uid of ${identityOf("namespaces", namespace.metadata)})`);
    }
    for (const [uid, identity] of present) words.set(uid, `(the uid of ${identity})`);
    return words;
  }
}

/**
 * `object` with every uid of `words` in its values read as words (its own as "(its own uid)"), and its own
 * generated name as "<generateName>*" where a value repeats it (a Job's `job-name` label); its own
 * `metadata.uid` and `metadata.name` are left as they are
 */
export function uidsOut(object: any, words: ReadonlyMap<string, string>): any {
  const meta = object.metadata ?? {};
  const generated = meta.generateName && meta.name?.startsWith(meta.generateName) ? meta.name : undefined;
  const read = (uid: string) => (uid === meta.uid ? "(its own uid)" : words.get(uid) ?? uid);
  const swap = (value: unknown): unknown => {
    if (typeof value === "string") {
      return generated !== undefined && value === generated ? `${meta.generateName}*` : value.replace(UID, read);
    }
    if (Array.isArray(value)) return value.map(swap);
    if (typeof value !== "object" || value === null) return value;
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, swap(item)]));
  };
  const { metadata, ...rest } = object;
  const { uid, name, ...ownMeta } = metadata ?? {};
  return { ...(swap(rest) as object), metadata: { ...(swap(ownMeta) as object), uid, name } };
}
