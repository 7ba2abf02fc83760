// An object's `metadata.managedFields` cut out of its JSON text before it is parsed. The API
// server's field-ownership records are most of a small object's JSON (nested `fieldsV1` maps,
// dozens of tiny objects once parsed), no part of an operator reads them, and every watch event
// and write answer carries them: parsed, they were most of what a burst allocated, and so of
// the heap's peak (issue 15). Only the object's own metadata is cut (the text's top-level
// object, or a watch event's `object`); anything else, or text that does not look like JSON
// the way the API server writes it, is returned as it is, and parsed whole as before.

const SPACE = 32;
const QUOTE = 34; // "
const BACKSLASH = 92;
const COLON = 58;
const COMMA = 44;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const KEY = '"managedFields":';

/**
 * The texts of the process left whole before the cut begins. The cut pays in a burst; made on
 * the handful of texts of a start-up, its loops grew hot enough for JavaScriptCore's DFG tier,
 * whose compiler's pages were +2.3 MB of an idle operator's RSS (45.4 → 47.8 MB). The objects
 * of those first texts lose their managedFields after parsing, as before (watching's `slim`).
 */
const LEFT_WHOLE = 1000;
let texts = 0;

/** withoutManagedFields once the process has seen LEFT_WHOLE texts; `text` itself before. */
export function cutManagedFields(text: string, shape: "object" | "event"): string {
  if (texts < LEFT_WHOLE) {
    texts++;
    return text;
  }
  return withoutManagedFields(text, shape);
}

/**
 * `text` parsed as JSON, its object's managedFields cut first (cutManagedFields). A cut that does not parse (text
 * that only looked like what the API server writes) is parsed whole instead: the cut saves memory, never loses a
 * field. Throws as JSON.parse does when what it parses does not parse (a text whose one fault lay inside the
 * managedFields cut out parses: that list is not read).
 */
export function parseWithoutManagedFields(text: string, shape: "object" | "event"): unknown {
  const cut = cutManagedFields(text, shape);
  if (cut !== text) {
    try {
      return JSON.parse(cut);
    } catch {
      // parsed whole below
    }
  }
  return JSON.parse(text);
}

/**
 * `text` without its object's `"managedFields":[…]` (and the comma that joined it), or `text`
 * itself. `shape`: the text is the object ("object": a write's answer) or a watch event ("event").
 */
export function withoutManagedFields(text: string, shape: "object" | "event"): string {
  const at = text.indexOf(KEY);
  if (at === -1) return text;
  const own = ownMetadataByParse(text, at, shape);
  if (own === false || (own === undefined && !ownMetadataAt(text, at, shape))) return text;
  const open = at + KEY.length;
  if (text.charCodeAt(open) !== OPEN_BRACKET) return text;
  let close = listEndBySurroundings(text, open);
  if (close === -1) close = listEnd(text, open);
  if (close === -1) return text;
  if (text.charCodeAt(at - 1) === COMMA) return text.slice(0, at - 1) + text.slice(close + 1);
  if (text.charCodeAt(close + 1) === COMMA) return text.slice(0, at) + text.slice(close + 2);
  return text.slice(0, at) + text.slice(close + 1);
}

/**
 * Whether the key at `at` is a key of the object's own metadata, told by JSON.parse (native, so not paid character
 * by character in the interpreter of the lean start-up): the text before the key, closed by a sentinel key and as
 * many braces as the metadata is deep, parses only when the key sits in an object that deep, and the sentinel lands
 * in the metadata only when that object is it. `undefined` when the text before the key has an empty string (the
 * sentinel's key could be one of its keys): ownMetadataAt tells then.
 */
function ownMetadataByParse(text: string, at: number, shape: "object" | "event"): boolean | undefined {
  const before = text.charCodeAt(at - 1);
  if (before !== COMMA && before !== OPEN_BRACE) return false;
  const head = text.slice(0, at);
  if (head.includes('""')) return undefined; // an empty key (there is no other way to write one) could be the sentinel
  let closed: unknown;
  try {
    closed = JSON.parse(shape === "object" ? `${head}"":0}}` : `${head}"":0}}}`);
  } catch {
    return false;
  }
  const top = closed as { metadata?: unknown; object?: { metadata?: unknown } } | null;
  const metadata = shape === "object" ? top?.metadata : top?.object?.metadata;
  return typeof metadata === "object" && metadata !== null && (metadata as Record<string, unknown>)[""] === 0;
}

/**
 * The index of the bracket that closes the managedFields list opened at `start`, found by what surrounds it, or -1
 * when that cannot tell (listEnd tells then). The API server writes the list's entries as objects, with no "]" in
 * them, and the list is followed by the next metadata key, or ends the metadata, followed by the object's next key:
 * so its end is the first "]" after it opened, in '}],"name' or '}]},"spec'. Those are never inside a string (a quote
 * in a string is escaped; a string's closing quote is followed by one of ",:}]", a key's opening quote by its
 * name), so that "]" is outside a string, and, being the first, closes either the list or a list inside an entry
 * (not what an API server writes), whose cut leaves unmatched brackets and does not parse (parseWithoutManagedFields
 * parses the text whole then). Anything else (a "]" in a string first, a metadata that ends the object) is -1.
 */
function listEndBySurroundings(text: string, start: number): number {
  if (text.charCodeAt(start + 1) !== OPEN_BRACE) return -1;
  const bracket = text.indexOf("]", start);
  if (bracket === -1 || text.charCodeAt(bracket - 1) !== CLOSE_BRACE) return -1;
  if (text.charCodeAt(bracket + 1) === COMMA && opensKey(text, bracket + 2)) return bracket;
  const endsMetadata = text.charCodeAt(bracket + 1) === CLOSE_BRACE && text.charCodeAt(bracket + 2) === COMMA;
  return endsMetadata && opensKey(text, bracket + 3) ? bracket : -1;
}

/** Whether a quote at `at` opens a key: it is followed by none of ",:}]", white space or the text's end. */
function opensKey(text: string, at: number): boolean {
  if (text.charCodeAt(at) !== QUOTE) return false;
  const next = text.charCodeAt(at + 1);
  return next > SPACE && next !== COMMA && next !== COLON && next !== CLOSE_BRACE && next !== CLOSE_BRACKET;
}

/** The index of the closing quote of the string opened at `start`, or -1. */
function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  while (end !== -1) {
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
  return -1;
}

/**
 * The index of the bracket that closes the managedFields list opened at `start`, or -1. Its entries hold strings and
 * objects only, no lists, so the first "]" outside a string closes it: found by jumping from string to string (a
 * few native searches each) instead of visiting every character between them, which the interpreter that runs the
 * lean start-up paid for one by one. A list that breaks that rule is scanned whole when its "]" is not right after
 * an entry's "}"; when it is, the cut does not parse, and parseWithoutManagedFields parses the text whole.
 */
function listEnd(text: string, start: number): number {
  let from = start + 1;
  let bracket = text.indexOf("]", from);
  while (bracket !== -1) {
    const quote = text.indexOf('"', from);
    if (quote === -1 || quote > bracket) {
      const entryEnd = text.charCodeAt(bracket - 1) === CLOSE_BRACE || bracket === start + 1;
      return entryEnd ? bracket : matchingEnd(text, start);
    }
    const end = stringEnd(text, quote);
    if (end === -1) return -1;
    from = end + 1;
    if (end > bracket) bracket = text.indexOf("]", from);
  }
  return -1;
}

/** The index of the bracket that closes the array or object opened at `start`, or -1. */
function matchingEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
      if (i === -1) return -1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return i;
  }
  return -1;
}

/**
 * Whether the key at `at` is a key of the object's own metadata: the path of keys to it is
 * ["metadata"] (an object) or ["object", "metadata"] (an event), through objects only. Scans
 * the text before it, which is short (metadata comes first in what the API server writes).
 */
function ownMetadataAt(text: string, at: number, shape: "object" | "event"): boolean {
  // The keys that matter, by name; any other key is "other", a list's or the top's place null.
  const path: (Key | null)[] = [];
  let key: Key | null = null;
  for (let i = 0; i < at; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end === -1 || end >= at) return false;
      // Only keys on the way to the object's metadata are needed; deeper ones are not read.
      if (text.charCodeAt(end + 1) === COLON && path.length <= 2) key = keyAt(text, i, end);
      i = end;
    } else if (c === OPEN_BRACE) {
      path.push(key);
      key = null;
    } else if (c === OPEN_BRACKET) {
      path.push(null); // a list: nothing in it is the object's own metadata
      key = null;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET || c === COMMA) {
      if (c !== COMMA) path.pop();
      key = null; // a key's value ended: the next "{" is not under it
    }
  }
  // path[0] is the top-level object's (no key): then "metadata", or "object" then "metadata".
  if (shape === "object") return path.length === 2 && path[0] === null && path[1] === "metadata";
  return path.length === 3 && path[0] === null && path[1] === "object" && path[2] === "metadata";
}

type Key = "metadata" | "object" | "other";

/** The key whose quotes are at `start` and `end`, compared in place (no string is made). */
function keyAt(text: string, start: number, end: number): Key {
  if (end - start === 9 && text.startsWith("metadata", start + 1)) return "metadata";
  if (end - start === 7 && text.startsWith("object", start + 1)) return "object";
  return "other";
}
