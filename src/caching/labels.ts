// Label selectors as the API server reads them (`app=web,tier!=db,env in (a,b),!legacy,replicas>2`),
// for lists answered from the store: the same objects a LIST with that labelSelector would return.

/** Whether an object's labels pass a selector. */
export type LabelTest = (labels: Readonly<Record<string, string>> | undefined) => boolean;

const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({});
const SET_BASED = /^([^\s!=(),<>]+)\s+(in|notin)\s*\(([^()]*)\)$/;
const EQUALITY_BASED = /^([^\s!=(),<>]+)\s*(==|=|!=)\s*([^\s!=(),<>]*)$/;
// apimachinery's Gt and Lt: `replicas>2` (an integer); `<` and `>` end a key, so `replicas>2` is never read as a key.
const ORDER_BASED = /^([^\s!=(),<>]+)\s*([<>])\s*([^\s!=(),<>]+)$/;
const EXISTENCE = /^(!?)\s*([^\s!=(),<>]+)$/;

/** Reads `selector` once; an empty one selects everything. Throws on one the API server would reject as unreadable. */
export function labelTest(selector: string): LabelTest {
  const tests = topLevelParts(selector).map((part) => requirement(part, selector));
  if (tests.length === 0) return () => true;
  return (labels) => {
    const present = labels ?? NO_LABELS;
    return tests.every((test) => test(present));
  };
}

function requirement(part: string, selector: string): (labels: Readonly<Record<string, string>>) => boolean {
  const set = SET_BASED.exec(part);
  if (set) {
    const [, key, operator, list] = set as unknown as [string, string, string, string];
    const values = new Set(list.split(",").map((value) => value.trim()));
    const inSet = operator === "in";
    return (labels) => (Object.hasOwn(labels, key) && values.has(labels[key]!)) === inSet;
  }
  const equality = EQUALITY_BASED.exec(part);
  if (equality) {
    const [, key, operator, value] = equality as unknown as [string, string, string, string];
    const equal = operator !== "!=";
    return (labels) => (Object.hasOwn(labels, key) && labels[key] === value) === equal;
  }
  const order = ORDER_BASED.exec(part);
  if (order) return ordering(order as unknown as [string, string, string, string], selector);
  const existence = EXISTENCE.exec(part);
  if (existence) {
    const [, not, key] = existence as unknown as [string, string, string];
    const exists = not === "";
    return (labels) => Object.hasOwn(labels, key) === exists;
  }
  const forms = "key, !key, key=value, key!=value, key in (a,b), key notin (a,b), key>n, key<n";
  throw new Error(`label selector ${JSON.stringify(selector)}: cannot read ${JSON.stringify(part)} (${forms})`);
}

/**
 * `key>n` or `key<n`: the label is there and reads as an integer beyond `n` (a label that does not read as one
 * never matches, as apimachinery's strconv.ParseInt refusal); `n` itself must be an integer, or the server refuses.
 */
function ordering(
  [, key, operator, bound]: [string, string, string, string], selector: string,
): (labels: Readonly<Record<string, string>>) => boolean {
  const limit = int64(bound);
  if (limit === undefined) {
    throw new Error(`label selector ${JSON.stringify(selector)}: ${JSON.stringify(bound)} after ` +
      `"${operator}" is not an integer (${key}${operator}n compares the label as a number)`);
  }
  const above = operator === ">";
  return (labels) => {
    const value = Object.hasOwn(labels, key) ? int64(labels[key]!) : undefined;
    return value !== undefined && (above ? value > limit : value < limit);
  };
}

/** As Go's strconv.ParseInt(text, 10, 64): undefined when it is not a 64-bit integer. */
function int64(text: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value >= -(2n ** 63n) && value < 2n ** 63n ? value : undefined;
}

/** The requirements: the selector cut at the commas outside parentheses. */
function topLevelParts(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i <= selector.length; i++) {
    const c = selector[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (i === selector.length || (c === "," && depth === 0)) {
      const part = selector.slice(from, i).trim();
      if (part) parts.push(part);
      from = i + 1;
    }
  }
  return parts;
}
