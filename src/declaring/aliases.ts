// Aliases: a handler module may give a resource a short name for kobun.yaml's `resources:`
// keys (`resource<T>("kobunexamples.kobun.dev/v1", { alias: "examples" })`), so a deployment's
// file does not repeat the selector. One resource has at most one alias, and an alias names
// one resource: a second, different one is an error when the handler is registered.

import { parseSelector, type ResourceSelector } from "../kube/index.ts";
import { RegistrationError } from "./registration.ts";

/** An alias: what a kobun.yaml key can be (a YAML key that reads as a word, no "/"). */
const ALIAS = /^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$/i;

/** The alias a token carries (tokens only: a selector string has none). */
export function aliasOf(selector: ResourceSelector): string | undefined {
  if (typeof selector === "string") return undefined;
  const alias = (selector as { alias?: unknown }).alias;
  return typeof alias === "string" ? alias : undefined;
}

/** Throws when `alias` cannot be a kobun.yaml key. */
export function checkAlias(alias: string, selector: string): void {
  if (!ALIAS.test(alias)) {
    throw new RegistrationError(
      `resource(${JSON.stringify(selector)}, { alias: ${JSON.stringify(alias)} }): ` +
        `an alias is letters, digits, "-", "_" and "." (like "examples")`,
    );
  }
}

/** The aliases of the registered resources: selector text → alias. */
export class Aliases {
  private readonly byText = new Map<string, string>();
  private readonly byAlias = new Map<string, string>();

  /** Notes the alias a registered selector carries; throws when it contradicts one noted before. */
  note(selector: ResourceSelector): void {
    const alias = aliasOf(selector);
    if (alias === undefined) return;
    const text = parseSelector(selector).text;
    const before = this.byText.get(text);
    if (before !== undefined && before !== alias) {
      throw new RegistrationError(
        `resource ${JSON.stringify(text)} has two aliases, "${before}" and "${alias}": give it one`,
      );
    }
    const owner = this.byAlias.get(alias);
    if (owner !== undefined && owner !== text) {
      throw new RegistrationError(
        `the alias "${alias}" names two resources, ${JSON.stringify(owner)} and ${JSON.stringify(text)}: ` +
          "give each its own",
      );
    }
    this.byText.set(text, alias);
    this.byAlias.set(alias, text);
  }

  /** Selector text → its alias. */
  all(): ReadonlyMap<string, string> {
    return this.byText;
  }

  clear(): void {
    this.byText.clear();
    this.byAlias.clear();
  }
}
