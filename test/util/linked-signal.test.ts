// Issue 15 (profile on a real API server: add/removeEventListener ~10 % of the operator's CPU,
// most of it on signals already carrying 100–1,000 listeners): every handler cycle links a
// signal to its worker's and its freeze gate's, both shared by every cycle in flight, and the
// native listener list is scanned on each add and remove. Links to one parent share one
// native listener; aborting still reaches each live link, with the parent's reason.

import { expect, test } from "bun:test";
import { eitherSignal, linkedSignal, onAbort } from "../../src/util/abort.ts";

function counted(signal: AbortSignal): { added: () => number; removed: () => number } {
  let added = 0;
  let removed = 0;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((...args: Parameters<AbortSignal["addEventListener"]>) => (added++, add(...args))) as AbortSignal["addEventListener"];
  signal.removeEventListener = ((...args: Parameters<AbortSignal["removeEventListener"]>) => (removed++, remove(...args))) as AbortSignal["removeEventListener"];
  return { added: () => added, removed: () => removed };
}

test("500 short-lived links to one long-lived signal put one native listener on it; aborting it reaches the live links with its reason", () => {
  const parent = new AbortController();
  const listeners = counted(parent.signal);
  for (let i = 0; i < 500; i++) linkedSignal(parent.signal).dispose();
  const live = Array.from({ length: 3 }, () => linkedSignal(parent.signal));
  const gone = linkedSignal(parent.signal);
  gone.dispose();
  expect(listeners.added()).toBe(1);
  expect(listeners.removed()).toBe(0);
  const reason = new DOMException("stop", "AbortError");
  parent.abort(reason);
  for (const link of live) expect(link.signal.reason).toBe(reason);
  expect(gone.signal.aborted).toBe(false);
});

test("a link to two signals follows whichever aborts first, and forgets the other", () => {
  const a = new AbortController();
  const b = new AbortController();
  const link = linkedSignal(a.signal, b.signal);
  b.abort("b first");
  expect(link.signal.reason).toBe("b first");
  let calls = 0;
  link.signal.addEventListener("abort", () => calls++);
  a.abort("a later");
  expect(link.signal.reason).toBe("b first");
  expect(calls).toBe(0);
});

test("onAbort: a callback forgotten before the abort is not called, the others are", () => {
  const parent = new AbortController();
  const calls: string[] = [];
  const forget = onAbort(parent.signal, () => calls.push("forgotten"));
  onAbort(parent.signal, () => calls.push("kept"));
  forget();
  parent.abort();
  expect(calls).toEqual(["kept"]);
});

test("eitherSignal: one signal per pair, shared by every caller, that aborts with whichever of the pair aborts first", () => {
  const worker = new AbortController();
  const gate = new AbortController();
  const otherGate = new AbortController();
  const shared = eitherSignal(worker.signal, gate.signal);
  expect(eitherSignal(worker.signal, gate.signal)).toBe(shared);
  const other = eitherSignal(worker.signal, otherGate.signal);
  expect(other).not.toBe(shared);
  gate.abort(new Error("frozen"));
  expect(shared.aborted).toBe(true);
  expect(shared.reason.message).toBe("frozen");
  expect(other.aborted).toBe(false);
  worker.abort(new Error("stopping"));
  expect(other.reason.message).toBe("stopping");
});
