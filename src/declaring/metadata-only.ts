// Which resources may be watched metadata-only because their handlers say they read nothing
// else. kobun cannot see what a handler reads, so it does not guess: a registration declares
// it by using a token made with `resource(selector, { metadataOnly: true })`, and a resource
// qualifies only when EVERY handler, daemon, timer and index registered for it does.

import { parseSelector, type ResourceSelector } from "../kube/index.ts";

/** What the registrations of one resource declare: the ids that read only metadata, and the others. */
export interface MetadataDeclaration {
  declared: string[];
  undeclared: string[];
}

const declares = (selector: ResourceSelector) =>
  typeof selector !== "string" && (selector as { metadataOnly?: unknown }).metadataOnly === true;

/** Per registered selector text: who declares metadata-only reading and who does not. */
export function metadataDeclarations(
  registrations: Iterable<{ id: string; selector: ResourceSelector }>,
): Map<string, MetadataDeclaration> {
  const out = new Map<string, MetadataDeclaration>();
  for (const { id, selector } of registrations) {
    const text = parseSelector(selector).text;
    let entry = out.get(text);
    if (!entry) out.set(text, (entry = { declared: [], undeclared: [] }));
    (declares(selector) ? entry.declared : entry.undeclared).push(id);
  }
  return out;
}
