// Code pages: give the kernel back the pages of the executable that the process has stopped running.
// A compiled kobun maps its whole runtime (~100 MB) and every page of it that ran once stays in its
// RSS: the start-up's (module loading, TLS set-up, the config's schema), a burst's compilers. They
// were 43 of an idle operator's 52 MB and the whole gap to a Go operator (bench/reconcile.ts: idle
// 52.6 vs 31.4 MB, settled at 2,000 parents 86.5 vs 68.7). madvise(MADV_PAGEOUT) on the executable's
// read-only mappings reclaims them: clean file pages mapped by no other process leave memory, not
// just this process's count, and a page that runs again is read back from the file. Done once the
// operator has started and when it has stayed quiet for QUIET_FOR_MS after activity (each trim makes
// the next event read its code back in).
// Linux only (5.4+); bun:ffi calls libc's madvise. Anything missing makes it a no-op, said once.

import type { Logger } from "../util/index.ts";

/** What a trim did. */
export type TrimOutcome =
  | { kind: "trimmed"; mappings: number; bytes: number }
  | { kind: "unavailable"; why: string };

const MADV_PAGEOUT = 21;
/** How long the process stays quiet (the heap pacer asleep, no wake between) before a trim. */
export const QUIET_FOR_MS = 2_000;

type Madvise = (address: bigint, length: bigint, advice: number) => number;
let madvise: Madvise | string | undefined;

/** libc's madvise through bun:ffi, or why there is none (loaded once, on the first trim). */
async function libcMadvise(): Promise<Madvise | string> {
  if (madvise !== undefined) return madvise;
  if (process.platform !== "linux") return (madvise = `not on Linux (${process.platform})`);
  try {
    const { dlopen, FFIType } = await import("bun:ffi");
    const signature = { madvise: { args: [FFIType.u64, FFIType.u64, FFIType.i32], returns: FFIType.i32 } } as const;
    const errors: string[] = [];
    for (const name of ["libc.so.6", "libc.so"]) {
      try {
        const lib = dlopen(name, signature);
        return (madvise = (address, length, advice) => lib.symbols.madvise(address, length, advice) as number);
      } catch (error) {
        errors.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    return (madvise = `no libc to call madvise in (${errors.join("; ")})`);
  } catch (error) {
    return (madvise = `bun:ffi unavailable: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The executable's mappings that are not writable (code and read-only data), from /proc/self/maps. */
export function executableRanges(maps: string, executable: string): Array<{ from: bigint; to: bigint }> {
  const ranges: Array<{ from: bigint; to: bigint }> = [];
  for (const line of maps.split("\n")) {
    // "start-end perms offset dev inode path": the path may hold spaces, so it is the rest of the line.
    const fields = line.match(/^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s+(.*)$/);
    if (!fields || fields[4] !== executable || fields[3]!.includes("w")) continue;
    ranges.push({ from: BigInt(`0x${fields[1]}`), to: BigInt(`0x${fields[2]}`) });
  }
  return ranges;
}

/** Asks the kernel to reclaim the resident pages of the executable's read-only mappings. */
export async function trimCodePages(executable = process.execPath): Promise<TrimOutcome> {
  const call = await libcMadvise();
  if (typeof call === "string") return { kind: "unavailable", why: call };
  const ranges = executableRanges(await Bun.file("/proc/self/maps").text(), executable);
  if (ranges.length === 0) return { kind: "unavailable", why: `no mapping of ${executable} in /proc/self/maps` };
  let bytes = 0n;
  for (const { from, to } of ranges) {
    if (call(from, to - from, MADV_PAGEOUT) !== 0) {
      return { kind: "unavailable", why: "madvise(MADV_PAGEOUT) refused (Linux before 5.4, or a seccomp filter)" };
    }
    bytes += to - from;
  }
  return { kind: "trimmed", mappings: ranges.length, bytes: Number(bytes) };
}

/** Whether this process runs a `kobun build` executable (its modules in Bun's embedded file system). */
export function compiledExecutable(main = Bun.main): boolean {
  return main.startsWith("/$bunfs/") || main.includes("~BUN");
}

/** How a CodeTrimmer trims, tells the time, and waits (tests give their own). */
export interface TrimmerHooks {
  trim?: () => Promise<TrimOutcome>;
  later?: (run: () => void, ms: number) => () => void;
}

/** What the trimmer reads of the process's activity (runtime/heap-pacing.ts's pacer). */
export interface Activity {
  /** Nothing allocates now (the pacer sleeps). */
  quiet(): boolean;
  /** A count that moves whenever activity starts again. */
  wakes(): number;
}

/**
 * Trims at start-up, and once the process has stayed quiet for QUIET_FOR_MS after going quiet: a burst's pauses
 * and a trickle of events never trim (each trim makes the next event read its code back in, 2 ms for a small
 * JSON-and-fetch path), an idle operator does once per quiet spell. Gives up for good, said once at debug,
 * where it cannot trim.
 */
export class CodeTrimmer {
  private busy = false;
  private unavailable = false;
  private cancelPending: (() => void) | undefined;
  private readonly trim: () => Promise<TrimOutcome>;
  private readonly later: (run: () => void, ms: number) => () => void;

  constructor(private readonly logger: Logger, private readonly activity: Activity, hooks: TrimmerHooks = {}) {
    this.trim = hooks.trim ?? trimCodePages;
    this.later = hooks.later ?? unrefTimeout;
  }

  /** The process went quiet: trims if it is still quiet, with no activity between, QUIET_FOR_MS from now. */
  quiet(): void {
    if (this.unavailable || this.cancelPending) return;
    const wakes = this.activity.wakes();
    this.cancelPending = this.later(() => {
      this.cancelPending = undefined;
      if (!this.activity.quiet()) return; // it goes quiet again later, and asks again
      if (this.activity.wakes() !== wakes) return this.quiet(); // a new quiet spell began meanwhile: from it
      if (!this.busy) this.run();
    }, QUIET_FOR_MS);
  }

  /**
   * A trim now, unless one is under way or trims are unavailable (false): the start-up's, before the watches
   * begin, and the lean start-up's (runtime/lean-startup.ts).
   */
  now({ logged = true }: { logged?: boolean } = {}): boolean {
    if (this.unavailable || this.busy) return false;
    this.run(logged);
    return true;
  }

  /** No pending trim stays behind (the operator stopped). */
  stop(): void {
    this.cancelPending?.();
    this.cancelPending = undefined;
    this.unavailable = true;
  }

  /** `logged: false`: a trim that is one of many (the lean start-up's, which counts them), not a line each. */
  private run(logged = true): void {
    this.busy = true;
    void this.trim().then((outcome) => this.done(outcome, logged), (error: unknown) => {
      this.done({ kind: "unavailable", why: error instanceof Error ? error.message : String(error) }, logged);
    });
  }

  private done(outcome: TrimOutcome, logged: boolean): void {
    this.busy = false;
    if (outcome.kind === "trimmed") {
      if (!logged) return;
      const fields = { mappings: outcome.mappings, mappedMiB: Math.round(outcome.bytes / 1048576) };
      return this.logger.debug("code pages handed back to the kernel", fields);
    }
    if (this.unavailable) return;
    this.unavailable = true;
    this.logger.debug("the runtime's code pages are not trimmed here", { why: outcome.why });
  }
}

/** A timeout that never keeps the process alive (a pending trim, the lean start-up's end), and its cancel. */
export function unrefTimeout(run: () => void, ms: number): () => void {
  const timer = setTimeout(run, ms);
  timer.unref();
  return () => clearTimeout(timer);
}
