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

/**
 * Text from elsewhere (an error page, a plugin's stderr) with every run that could be a
 * credential or Secret data replaced by its length: what follows "Bearer"/"Basic", JWTs, and
 * any run of 32+ base64 or base64url characters (tokens, keys, encoded data).
 */
export function withoutCredentials(text: string): string {
  return text
    .replace(/\b(bearer|basic)\s+\S+/gi, (_, scheme: string) => `${scheme} (redacted)`)
    .replace(/\beyJ[\w-]*\.[\w-]+\.[\w-]*/g, (jwt) => `(a ${jwt.length}-character JWT redacted)`)
    .replace(/[A-Za-z0-9+/_=-]{32,}/g, (run) => `(${run.length} characters redacted)`);
}
