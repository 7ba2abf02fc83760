// A failed run told as a story: the steps and the faults as they struck, in order, then the
// check that failed with what it found (the object diff against the reference run), and the objects
// the operator's handlers or reconciles were failing on then.

import type { RunFailure, RunOutcome } from "./simulate-run.ts";

export function storyOf(outcome: RunOutcome, failure: RunFailure): string {
  const happened = outcome.story.filter((line) => !line.startsWith("fault: "));
  const step = failure.step;
  const when = step === undefined ? "at the end" : step === 0 ? "at the start" : `after step ${step}`;
  const lines = [
    "what happened:", ...happened.map((line) => `  ${line}`),
    `check failed ${when}: ${failure.check}: ${failure.message}`, ...failure.details.map((line) => `  ${line}`),
  ];
  if (failure.failing) {
    lines.push("the operator was failing on these objects then (the last failed call of each):",
      ...failure.failing.map((line) => `  ${line}`));
  }
  return lines.join("\n");
}
