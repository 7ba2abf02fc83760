// Describing text that may carry credentials or Secret data (a kubeconfig, a watch line, a
// response body) without repeating any of it: lengths, kinds and positions, never content.
// Parsers quote what they choke on (Bun's JSON.parse: `Unexpected identifier "c2VjcmV0"`),
// so even their messages are cut before the first quote.

/** A parser's complaint without what it quotes: `JSON Parse error: Unexpected identifier`. */
export function parserComplaint(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const quote = message.search(/["'`]/);
  const kept = (quote === -1 ? message : message.slice(0, quote)).replace(/\s+/g, " ").trim();
  return kept.replace(/[\s:,(]+$/, "").slice(0, 120) || "unparsable";
}
