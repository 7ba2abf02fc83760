// startSandbox's options, checked before a port opens: a bad one is refused naming it, what it got and what it
// takes. Unchecked, `auth: "basic"` (any word but "token") served an open sandbox, where anyone on 127.0.0.1 is
// system:masters; `historySize: -1` broke the first write from inside; a misspelt option was ignored.

const OPTIONS = [
  "tls", "token", "auth", "clientCA", "webhookClient", "historySize", "port", "bookmarkIntervalMs", "log",
  "shardSelectors",
];

/** Throws at the first option startSandbox cannot take as given. */
export function checkSandboxOptions(opts: Record<string, unknown>): void {
  const shown = (value: unknown) => JSON.stringify(value) ?? String(value);
  const refuse = (key: string, takes: string) => {
    throw new Error(`sandbox: ${key} is ${takes}, got ${shown(opts[key])}`);
  };
  for (const key of Object.keys(opts)) {
    if (opts[key] !== undefined && !OPTIONS.includes(key)) {
      throw new Error(`sandbox: no option ${key} (options: ${OPTIONS.join(", ")})`);
    }
  }
  const { auth, historySize, bookmarkIntervalMs, token, log } = opts;
  for (const key of ["tls", "clientCA", "shardSelectors"]) {
    if (opts[key] !== undefined && typeof opts[key] !== "boolean") refuse(key, "true or false");
  }
  if (auth !== undefined && auth !== "open" && auth !== "token") refuse("auth", '"open" or "token"');
  if (token !== undefined && !(typeof token === "string" && token.length > 0)) refuse("token", "a non-empty string");
  if (historySize !== undefined && !(Number.isInteger(historySize) && (historySize as number) >= 1)) {
    refuse("historySize", "a whole number of events ≥ 1");
  }
  const interval = bookmarkIntervalMs as number;
  if (bookmarkIntervalMs !== undefined && !(typeof interval === "number" && interval > 0)) {
    refuse("bookmarkIntervalMs", "a number of ms > 0");
  }
  if (log !== undefined && typeof log !== "function") refuse("log", "a function of one line");
  if (opts.clientCA && !opts.tls) throw new Error("sandbox: clientCA requires tls: true");
  if (auth === "open" && token !== undefined) throw new Error('sandbox: auth "open" contradicts a token');
}
