// The likely typo's intended word: a setting's, a flag's or an option's name.

/**
 * The candidate closest to `word` by edit distance, if close enough to be a likely typo: within
 * `tolerated` edits (by default 2, or a third of the word's length when longer).
 */
export function closestMatch(
  word: string, candidates: readonly string[], tolerated = Math.max(2, Math.floor(word.length / 3)),
): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= tolerated ? best : undefined;
}

/** Edits from `a` to `b`: an insertion, a deletion, a substitution, or two neighbours swapped ("idel" → "idle"). */
function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      let best = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
      const swapped = i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1];
      if (swapped) best = Math.min(best, (before[j - 2] ?? 0) + 1);
      current[j] = best;
    }
    before = previous;
    previous = current;
  }
  return previous[b.length] ?? 0;
}
