// Reading a running operator's /metrics in tests: one scrape over HTTP parsed into
// series → value, and a bounded poll of scrapes until a condition holds.

export function parseExposition(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const space = line.lastIndexOf(" ");
    values.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return values;
}

/** Scrapes until `pred` holds (a scrape is the only way to see the numbers); bounded. */
export async function eventPoll(scrape: () => Promise<unknown>, pred: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await scrape();
    if (pred()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/** A scraper of `metricsUrl`: `scrape()` refreshes, `value(series)` reads the last scrape (0 when absent). */
export function scraper(metricsUrl: () => string): { scrape(): Promise<Map<string, number>>; value(series: string): number; has(series: string): boolean } {
  let last = new Map<string, number>();
  return {
    scrape: async () => (last = parseExposition(await (await fetch(metricsUrl())).text())),
    value: (series) => last.get(series) ?? 0,
    has: (series) => last.has(series),
  };
}
