// LeaseWriter: the writes of one replica's group Leases, as client-go writes leader-election
// Leases: a PUT with the resourceVersion of the record known (LeaseBook), so two replicas never
// both win a shard (a 409 means someone else did: the record is read again). leases.ts decides
// when; this file only writes and keeps the book up to date with what it wrote.

import type { KubeClient } from "../kube/index.ts";
import { freshLease, leaseResource, releasedLease, renewedLease, specOf } from "../kube/index.ts";
import type { KubeObject } from "../kube/index.ts";
import type { Logger } from "../util/index.ts";
import { GROUP_LABEL, type LeaseBook, memberLeaseName, ROLE_LABEL, SHARDS_ANNOTATION } from "./lease-book.ts";

export interface LeaseWriterOptions {
  client: Pick<KubeClient, "get" | "create" | "replace" | "delete">;
  namespace: string;
  group: string;
  id: string;
  durationMs: number;
  /** Announced on every Lease written (lease-book.ts' SHARDS_ANNOTATION). */
  shards: number;
}

export class LeaseWriter {
  constructor(
    private readonly options: LeaseWriterOptions,
    private readonly book: LeaseBook,
    private readonly log: Logger,
  ) {}

  /** Creates a Lease held by us, or takes over (renews) the one we know; true when it is ours now. */
  async write(name: string, role: "member" | "shard", signal: AbortSignal): Promise<boolean> {
    const { client, namespace, id, durationMs } = this.options;
    const known = this.book.get(name);
    const now = Date.now();
    try {
      const lease = known ? renewedLease(known, id, durationMs, now) : freshLease(name, namespace, id, durationMs, now);
      const body = this.labelled(lease, role);
      const written = known
        ? await client.replace(leaseResource, namespace, name, body, { signal })
        : await client.create(leaseResource, namespace, body, { signal });
      this.book.observe(written);
      return true;
    } catch (error) {
      if (signal.aborted) return false;
      const code = (error as { code?: unknown }).code;
      if (code === 409 || code === 404) await this.reread(name, signal);
      else this.log.debug("lease write failed", { lease: name, error: errorMessage(error) });
      return false;
    }
  }

  /**
   * Writes a shard's Lease free, while it names us; once more after a 409 (a renewal still in flight
   * when it was given up).
   */
  async release(index: number, name: string, signal: AbortSignal): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      const known = this.book.get(name);
      if (!known || specOf(known).holderIdentity !== this.options.id) {
        // Its lease lapsed meanwhile (a stall past renewDeadline) and another replica took it.
        const holder = known ? specOf(known).holderIdentity ?? "" : "";
        this.log.info("a shard given up was taken meanwhile: nothing to release", { shard: index, holder });
        return false;
      }
      try {
        const { client, namespace } = this.options;
        const released = releasedLease(known, Date.now());
        this.book.observe(await client.replace(leaseResource, namespace, name, released, { signal }));
        return true;
      } catch (error) {
        if ((error as { code?: unknown }).code === 409 && attempt === 0) {
          await this.reread(name, signal);
          continue;
        }
        this.log.warn(
          "could not release a shard; another replica takes it when its lease expires",
          { shard: index, error: errorMessage(error) },
        );
        return false;
      }
    }
  }

  /** Deletes our membership (leaving); left to expire by itself if that fails. */
  async leave(): Promise<void> {
    try {
      const { client, namespace, group, id } = this.options;
      await client.delete(leaseResource, namespace, memberLeaseName(group, id), { signal: AbortSignal.timeout(2000) });
    } catch {
      // it expires by itself after its duration
    }
  }

  private labelled(lease: KubeObject, role: "member" | "shard"): KubeObject {
    const labels = { ...lease.metadata.labels, [GROUP_LABEL]: this.options.group, [ROLE_LABEL]: role };
    const annotations = { ...lease.metadata.annotations, [SHARDS_ANNOTATION]: String(this.options.shards) };
    return { ...lease, metadata: { ...lease.metadata, labels, annotations } };
  }

  private async reread(name: string, signal: AbortSignal): Promise<void> {
    try {
      this.book.observe(await this.options.client.get(leaseResource, this.options.namespace, name, { signal }));
    } catch (error) {
      if ((error as { code?: unknown }).code === 404) this.book.delete(name);
    }
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
