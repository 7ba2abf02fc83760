// TaskScope: structured concurrency for everything long-running in kobun.
// Every task is started through a scope that owns an AbortController. Closing the scope
// aborts its signal, waits for the tasks up to a grace period and names the ones that
// did not finish, so that when `run()` returns, nothing of ours is left running.

import { isAbortError } from "./abort.ts";

export interface TaskReport {
  /** Names of tasks still running when the grace period ran out; they are abandoned. */
  abandoned: string[];
}

/** `scope` is the one the task ran in: what the failure means ends when that scope does. */
export type TaskFailure = (name: string, error: unknown, scope: TaskScope) => void;

export class TaskScope {
  private readonly controller = new AbortController();
  private readonly tasks = new Map<number, { name: string; done: Promise<void> }>();
  private readonly children = new Set<TaskScope>();
  private nextId = 0;
  private closed = false;
  private readonly detach: () => void;
  /** Set by the parent scope: forget this child once it is closed. */
  private onClosed?: () => void;

  constructor(
    readonly name: string,
    parent?: AbortSignal,
    private readonly onFailure?: TaskFailure,
  ) {
    const onParentAbort = () => this.controller.abort(parent?.reason);
    if (parent?.aborted) this.controller.abort(parent.reason);
    else parent?.addEventListener("abort", onParentAbort, { once: true });
    this.detach = () => parent?.removeEventListener("abort", onParentAbort);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Names of the tasks running now, in this scope and its children. */
  running(): string[] {
    const names = [...this.tasks.values()].map((t) => `${this.name}/${t.name}`);
    for (const child of this.children) names.push(...child.running());
    return names;
  }

  /**
   * Starts `fn` as a task of this scope. A task that throws (other than by abort) is reported
   * to the scope's failure callback; the returned promise never rejects.
   */
  spawn(name: string, fn: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
    if (this.closed) throw new Error(`task scope ${this.name} is closed; cannot start ${name}`);
    const id = this.nextId++;
    const done = (async () => {
      try {
        await fn(this.controller.signal);
      } catch (error) {
        if (!this.controller.signal.aborted || !isAbortError(error)) this.onFailure?.(name, error, this);
      } finally {
        this.tasks.delete(id);
      }
    })();
    this.tasks.set(id, { name, done });
    return done;
  }

  /** A nested scope whose signal follows this one's; `close()` closes children too. */
  child(name: string): TaskScope {
    const child = new TaskScope(`${this.name}/${name}`, this.controller.signal, this.onFailure);
    this.children.add(child);
    // A child closed on its own (a namespace that went away) is forgotten at once, so a
    // long-running parent does not collect the scopes of every namespace it ever served.
    child.onClosed = () => this.children.delete(child);
    return child;
  }

  /** Aborts the scope and waits up to `graceMs` for every task; returns the abandoned ones. */
  async close(graceMs: number, reason: unknown = new DOMException("scope closed", "AbortError")): Promise<TaskReport> {
    this.closed = true;
    this.controller.abort(reason);
    this.detach();
    const deadline = Date.now() + graceMs;
    const childReports = await Promise.all(
      [...this.children].map((c) => c.close(Math.max(0, deadline - Date.now()), reason)),
    );
    await this.settle(Math.max(0, deadline - Date.now()));
    const abandoned = [...this.tasks.values()].map((t) => `${this.name}/${t.name}`);
    for (const r of childReports) abandoned.push(...r.abandoned);
    this.children.clear();
    this.onClosed?.();
    return { abandoned };
  }

  /** Waits for all current tasks to end, without aborting (used for orderly drains). */
  async settle(timeoutMs = Infinity): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout =
      timeoutMs === Infinity
        ? null
        : new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    try {
      while (this.tasks.size > 0) {
        const all = Promise.all([...this.tasks.values()].map((t) => t.done)).then(() => true);
        const ok = await (timeout ? Promise.race([all, timeout]) : all);
        if (!ok) return false;
      }
      return true;
    } finally {
      if (timer) clearTimeout(timer);
    }
  }
}
