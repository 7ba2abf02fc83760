// Label selectors as the API server reads them (`app=web,tier!=db,env in (a,b),!legacy`), for
// lists answered from the store: the same objects a LIST with that labelSelector would return.

/** Whether an object's labels pass a selector. */
export type LabelTest = (labels: Readonly<Record<string, string>> | undefined) => boolean;

const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({});
const SET_BASED = /^([^\s!=(),]+)\s+(in|notin)\s*\(([^()]*)\)$/;
const EQUALITY_BASED = /^([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/;
const EXISTENCE = /^(!?)\s*([^\s!=(),]+)$/;

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
  const existence = EXISTENCE.exec(part);
  if (existence) {
    const [, not, key] = existence as unknown as [string, string, string];
    const exists = not === "";
    return (labels) => Object.hasOwn(labels, key) === exists;
  }
  const forms = "key, !key, key=value, key!=value, key in (a,b), key notin (a,b)";
  throw new Error(`label selector ${JSON.stringify(selector)}: cannot read ${JSON.stringify(part)} (${forms})`);
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
