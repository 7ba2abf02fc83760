// The peering decision as a pure function: given what the peering object says and the
// time now, is this operator frozen, and until when at most? No I/O, no clock reads, so
// every case is a unit test (test/peering/decide.test.ts).
//
// The record format is Kopf's (`status.<peer id> = { priority, lifetime, lastseen }`), on
// purpose: kobun and Kopf operators pointed at the same peering object see each other.

/** One operator's record in a peering object, parsed. Times are epoch milliseconds. */
export interface Peer {
  id: string;
  priority: number;
  /** Seconds the record stays valid after `lastseen` without a keep-alive. */
  lifetime: number;
  lastseen: number;
  /** `lastseen + lifetime`: from this moment on, the peer is presumed dead (a ghost). */
  deadline: number;
  /** Free text left by `kobun freeze --message` (Kopf ignores unknown fields). */
  message?: string;
}

/** The wire shape of one record, as Kopf writes it. */
export interface PeerRecord {
  priority: number;
  lifetime: number;
  lastseen: string;
  message?: string;
  [key: string]: unknown;
}

export interface Decision {
  frozen: boolean;
  /** The live peers that cause the freeze: higher priority first, then same priority; each group by deadline. */
  blockers: Peer[];
  /** True when the freeze is caused only by peers of the same priority (the operators conflict). */
  conflict: boolean;
  /** When a blocking peer expires next (epoch ms): re-evaluate exactly then. Absent when not frozen. */
  nextChangeAt?: number;
  /** Records whose lifetime has passed (never our own): to be removed from the peering object. */
  dead: Peer[];
}

/**
 * Decides whether the operator `selfId` with `selfPriority` must freeze.
 *
 * - A live peer with a higher priority freezes us (a developer's `--dev` operator, or `kobun freeze`).
 * - A live peer with the same priority freezes us too, and it freezes itself for the same
 *   reason: two equal operators would handle the same objects twice, so nobody serves until
 *   one is gone. This is Kopf's safe choice; the caller warns about the conflict.
 * - A peer is dead from `deadline` on (`deadline <= now`), exactly as Kopf judges it.
 * - `equalsShare`: sharded replicas (sharding/) split the objects among themselves, so peers of
 *   the same priority do not freeze each other; a higher priority still freezes them all.
 */
export function decide(
  now: number, selfId: string, selfPriority: number, peers: readonly Peer[], equalsShare = false,
): Decision {
  const dead: Peer[] = [];
  const higher: Peer[] = [];
  const same: Peer[] = [];
  for (const peer of peers) {
    if (peer.id === selfId) continue;
    if (peer.deadline <= now) dead.push(peer);
    else if (peer.priority > selfPriority) higher.push(peer);
    else if (peer.priority === selfPriority && !equalsShare) same.push(peer);
  }
  const byDeadline = (a: Peer, b: Peer) => a.deadline - b.deadline;
  higher.sort((a, b) => b.priority - a.priority || byDeadline(a, b));
  same.sort(byDeadline);
  const blockers = [...higher, ...same];
  if (blockers.length === 0) return { frozen: false, blockers, conflict: false, dead };
  const nextChangeAt = Math.min(...blockers.map((p) => p.deadline));
  return { frozen: true, blockers, conflict: higher.length === 0, nextChangeAt, dead };
}

/**
 * Parses a peering object's `status` into peers. Malformed records are skipped, not fatal:
 * the object is shared with other operators (and other versions of Kopf), and one bad
 * record must not stop this one from deciding. Missing fields get Kopf's defaults
 * (priority 0, lifetime 60 s); a record without `lastseen` counts as seen `now`.
 */
export function parsePeers(status: unknown, now: number): Peer[] {
  if (typeof status !== "object" || status === null || Array.isArray(status)) return [];
  const peers: Peer[] = [];
  for (const [id, raw] of Object.entries(status as Record<string, unknown>)) {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) continue;
    const record = raw as Record<string, unknown>;
    const priority = toNumber(record.priority, 0);
    const lifetime = toNumber(record.lifetime, 60);
    const lastseen = record.lastseen === undefined || record.lastseen === null ? now : parseTime(record.lastseen);
    if (priority === undefined || lifetime === undefined || lastseen === undefined) continue;
    const peer: Peer = { id, priority, lifetime, lastseen, deadline: lastseen + lifetime * 1000 };
    if (typeof record.message === "string") peer.message = record.message;
    peers.push(peer);
  }
  return peers;
}

/** The record this operator writes for itself. `lifetime` is whole seconds, as Kopf reads it with `int()`. */
export function peerRecord(now: number, priority: number, lifetime: number, message?: string): PeerRecord {
  const record: PeerRecord = { priority, lifetime: wholeSeconds(lifetime), lastseen: formatTime(now) };
  if (message !== undefined) record.message = message;
  return record;
}

/**
 * How long to wait between keep-alives, in ms: `lifetime` minus a margin for the PATCH to
 * land, 5–10 s for long lifetimes (as Kopf), ¼–⅓ of it for short ones, jittered so that
 * replicas started together do not write in lockstep.
 */
export function keepaliveInterval(lifetimeSeconds: number, random: number = Math.random()): number {
  const lifetimeMs = lifetimeSeconds * 1000;
  const margin = Math.min(5000 + random * 5000, lifetimeMs * (0.25 + random * 0.08));
  return Math.max(100, lifetimeMs - margin);
}

/** Kopf parses `lifetime` with Python's `int()`: write whole seconds, at least 1. */
export function wholeSeconds(seconds: number): number {
  return Math.max(1, Math.ceil(seconds));
}

/** ISO 8601 in UTC with microseconds and `+00:00`, the way Kopf's `isoformat()` writes it. */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000+00:00");
}

/**
 * Parses `lastseen` as written by kobun or by any Kopf version. Old Kopf versions wrote a
 * naive timestamp (no zone) meaning UTC, which `Date.parse` would read as local time; and
 * Python writes microseconds, which are cut to milliseconds here.
 */
/** Date, time (seconds optional), an optional fraction of any length, an optional zone (`Z`, `+01:00`, `+0100`). */
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})?$/i;

export function parseTime(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const match = TIMESTAMP.exec(value.trim());
  if (!match) return undefined;
  const [, date, time, fraction = "", zone] = match;
  const millis = fraction ? `.${fraction.slice(0, 3).padEnd(3, "0")}` : "";
  const offset =
    !zone || zone.toUpperCase() === "Z" ? "Z" : zone.includes(":") ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const ms = Date.parse(`${date}T${time}${millis}${offset}`);
  return Number.isNaN(ms) ? undefined : ms;
}

function toNumber(value: unknown, fallback: number): number | undefined {
  if (value === undefined || value === null) return fallback;
  const n = typeof value === "string" ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) ? n : undefined;
}

/**
 * The live records of a deleted peering object (its status: `goneStatus`) that the current one (re-created by
 * anyone's keep-alive, or absent) does not show, until their deadlines: deleting the object
 * does not make the peers in it dead. Records without `lastseen` are not carried: they would
 * never expire.
 */
export function carriedPeers(goneStatus: unknown, peers: Peer[], ownId: string, now: number): Peer[] {
  const raw = (goneStatus ?? {}) as Record<string, { lastseen?: unknown } | null>;
  const present = new Set(peers.map((p) => p.id));
  return parsePeers(goneStatus, now).filter(
    (p) => p.id !== ownId && !present.has(p.id) && p.deadline > now && raw[p.id]?.lastseen != null,
  );
}

/** Live records other than our own, of the object and of a deleted one still in force. */
export function countLive(peers: readonly Peer[], carried: readonly Peer[], self: string, now: number): number {
  let live = 0;
  for (const peer of [...peers, ...carried]) if (peer.id !== self && peer.deadline > now) live++;
  return live;
}
