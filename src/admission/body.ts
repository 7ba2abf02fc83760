// The body of a review, read as JSON the server can go on to handle. JSON.parse itself copes
// with any nesting, but what follows does not: structuredClone, JSON.stringify and any
// recursive walk overflow the stack somewhere past 20,000 levels, which surfaced as an HTTP
// 500. kube-apiserver's own JSON decoding (apimachinery's util/json) stops at 10,000 levels, so
// no review it sends is deeper: a deeper body is refused before it is parsed, in one pass.

import { BadReviewError } from "./review.ts";

export const MAX_NESTING_DEPTH = 10_000;

/** The parsed body; BadReviewError (a 400) when it is not JSON or nested too deeply. */
export function parseReviewBody(text: string): unknown {
  const depth = nestingDepth(text, MAX_NESTING_DEPTH);
  if (depth > MAX_NESTING_DEPTH) {
    throw new BadReviewError(`the body is nested deeper than ${MAX_NESTING_DEPTH} levels, which no API server sends`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new BadReviewError("the body is not JSON");
  }
}

const OPEN_BRACE = 0x7b, OPEN_BRACKET = 0x5b, CLOSE_BRACE = 0x7d, CLOSE_BRACKET = 0x5d, QUOTE = 0x22, BACKSLASH = 0x5c;

/** The deepest nesting of objects and arrays outside strings, counted up to just past `limit`. */
function nestingDepth(text: string, limit: number): number {
  let depth = 0, deepest = 0, inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return deepest;
}
