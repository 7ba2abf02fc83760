// A `labelSelector` parsed as apimachinery's labels.Parse parses it: its lexer (identifiers,
// the operators `=`, `==`, `!=`, `!`, `in`, `notin`, `>`, `<`, parentheses, commas), its
// recursive descent, and each refusal in its words, including the key and value validation
// (IsQualifiedName, IsValidLabelValue) of the requirements it builds. `>` and `<` compare integers.

import { ApiStatusError } from "./status.ts";

export type LabelReq =
  | { op: "=" | "!="; key: string; value: string }
  | { op: "in" | "notin"; key: string; values: string[] }
  | { op: "exists" | "!exists"; key: string }
  | { op: "gt" | "lt"; key: string; value: string };

type Tok = "end" | ")" | "," | "!" | "==" | "=" | ">" | "id" | "in" | "<" | "!=" | "notin" | "(";
interface Item { tok: Tok; lit: string }

const TOKENS = new Set(["(", ")", ",", "!", "==", "=", ">", "in", "<", "!=", "notin"]);
const special = (ch: string) => "=!(),><".includes(ch);
const space = (ch: string) => ch === " " || ch === "\t" || ch === "\r" || ch === "\n";

/** the lexer's items, up to and including the end of the string */
function scan(s: string): Item[] {
  const out: Item[] = [];
  let pos = 0;
  for (;;) {
    while (pos < s.length && space(s[pos]!)) pos++;
    if (pos >= s.length) { out.push({ tok: "end", lit: "" }); return out; }
    if (special(s[pos]!)) {
      // the longest operator from here (every special character is one by itself)
      let lit = s[pos]!;
      while (pos + lit.length < s.length && TOKENS.has(lit + s[pos + lit.length])) lit += s[pos + lit.length];
      out.push({ tok: lit as Tok, lit });
      pos += lit.length;
      continue;
    }
    let buf = "";
    while (pos < s.length && !special(s[pos]!) && !space(s[pos]!)) buf += s[pos++];
    out.push({ tok: TOKENS.has(buf) ? buf as Tok : "id", lit: buf });
  }
}

/** strconv.ParseInt(v, 10, 64) succeeds */
const isInt64 = (v: string) => /^[+-]?\d+$/.test(v) && BigInt(v) >= -(2n ** 63n) && BigInt(v) < 2n ** 63n;

const bad = (message: string) => new ApiStatusError(400, "BadRequest", message);
const BINARY = "in, notin, =, ==, !=, gt, lt";

class Parser {
  private pos = 0;
  constructor(private readonly items: Item[]) {}
  /** in a value's place, `in` and `notin` are identifiers */
  peek(values = true): Item { return this.asValue(this.items[this.pos]!, values); }
  next(values = true): Item { return this.asValue(this.items[this.pos++]!, values); }
  private asValue(item: Item, values: boolean): Item {
    return values && (item.tok === "in" || item.tok === "notin") ? { tok: "id", lit: item.lit } : item;
  }
}

export function parseLabelSelector(s: string): LabelReq[] {
  const p = new Parser(scan(s));
  const reqs: LabelReq[] = [];
  for (;;) {
    const { tok, lit } = p.peek();
    if (tok === "end") return reqs;
    if (tok !== "id" && tok !== "!") throw bad(`found '${lit}', expected: !, identifier, or 'end of string'`);
    try {
      reqs.push(requirement(p));
    } catch (e) {
      throw bad(`unable to parse requirement: ${(e as Error).message}`);
    }
    const after = p.next();
    if (after.tok === "end") return reqs;
    if (after.tok !== ",") throw bad(`found '${after.lit}', expected: ',' or 'end of string'`);
    const following = p.peek();
    if (following.tok !== "id" && following.tok !== "!") {
      throw bad(`found '${following.lit}', expected: identifier after ','`);
    }
  }
}

function requirement(p: Parser): LabelReq {
  let item = p.next();
  const negated = item.tok === "!";
  if (negated) item = p.next();
  if (item.tok !== "id") throw new Error(`found '${item.lit}', expected: identifier`);
  const key = item.lit;
  const keyErrors = qualifiedNameErrors(key);
  if (keyErrors.length) throw new Error(`<nil>: Invalid value: ${JSON.stringify(key)}: ${keyErrors.join("; ")}`);
  const ahead = p.peek().tok;
  if (negated || ahead === "end" || ahead === ",") return { op: negated ? "!exists" : "exists", key };
  const op = p.next(false);
  const ops: Partial<Record<Tok, "=" | "!=" | "in" | "notin" | "gt" | "lt">> =
    { "=": "=", "==": "=", "!=": "!=", in: "in", notin: "notin", ">": "gt", "<": "lt" };
  const kind = ops[op.tok];
  if (!kind) throw new Error(`found '${op.lit}', expected: ${BINARY}`);
  const values = kind === "in" || kind === "notin" ? setValues(p) : [exactValue(p)];
  const errs: string[] = [];
  if (kind === "gt" || kind === "lt") {
    values.forEach((v, i) => {
      if (!isInt64(v)) errs.push(`values[${i}]: Invalid value: ${JSON.stringify(v)}: for 'Gt', 'Lt' ` +
        "operators, the value must be an integer");
    });
  }
  values.forEach((v, i) => {
    const valueErrors = labelValueErrors(v);
    const at = `values[${i}][${key}]`;
    if (valueErrors.length) errs.push(`${at}: Invalid value: ${JSON.stringify(v)}: ${valueErrors.join("; ")}`);
  });
  if (errs.length) throw new Error(errs.length === 1 ? errs[0] : `[${errs.join(", ")}]`);
  if (kind === "in" || kind === "notin") return { op: kind, key, values };
  return { op: kind, key, value: values[0]! };
}

/** `(a,b)`: a sorted set; `()` and empty items are the empty value */
function setValues(p: Parser): string[] {
  const open = p.next();
  if (open.tok !== "(") throw new Error(`found '${open.lit}' expected: '('`);
  const first = p.peek();
  if (first.tok === ")") { p.next(); return [""]; }
  if (first.tok !== "id" && first.tok !== ",") {
    throw new Error(`found '${first.lit}', expected: ',', ')' or identifier`);
  }
  const set = new Set<string>();
  for (;;) {
    const item = p.next();
    if (item.tok === "id") {
      set.add(item.lit);
      const ahead = p.peek();
      if (ahead.tok === ")") break;
      if (ahead.tok !== ",") throw new Error(`found '${ahead.lit}', expected: ',' or ')'`);
    } else if (item.tok === ",") {
      if (set.size === 0) set.add("");
      const ahead = p.peek().tok;
      if (ahead === ")") { set.add(""); break; }
      if (ahead === ",") { p.next(); set.add(""); }
    } else throw new Error(`found '${item.lit}', expected: ',', or identifier`);
  }
  if (p.next().tok !== ")") throw new Error(`found '${first.lit}', expected: ')'`);
  return [...set].sort();
}

function exactValue(p: Parser): string {
  const ahead = p.peek().tok;
  if (ahead === "end" || ahead === ",") return "";
  const item = p.next();
  if (item.tok !== "id") throw new Error(`found '${item.lit}', expected: identifier`);
  return item.lit;
}

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const byteLength = (s: string) => Buffer.byteLength(s);
const NAME_RULE = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " +
  "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/** validation.IsQualifiedName, as a label key */
export function qualifiedNameErrors(key: string): string[] {
  const parts = key.split("/");
  if (parts.length > 2) {
    return [`a valid label key ${NAME_RULE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  const errs: string[] = [];
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (!prefix) errs.push("prefix part must be non-empty");
    else {
      if (byteLength(prefix) > 253) errs.push("prefix part must be no more than 253 bytes");
      if (!SUBDOMAIN.test(prefix)) {
        errs.push("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, " +
          "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for " +
          "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
      }
    }
  }
  if (!name) errs.push("name part must be non-empty");
  else if (byteLength(name) > 63) errs.push("name part must be no more than 63 bytes");
  if (!NAME.test(name)) errs.push(`name part ${NAME_RULE}`);
  return errs;
}

/** validation.IsValidLabelValue */
export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push("must be no more than 63 bytes");
  if (value !== "" && !NAME.test(value)) {
    errs.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and " +
      "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used " +
      "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  }
  return errs;
}

export function labelMatches(reqs: LabelReq[], labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return reqs.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const v = l[r.key];
    switch (r.op) {
      case "=": return has && v === r.value;
      case "!=": return !has || v !== r.value;
      case "in": return has && r.values.includes(v!);
      case "notin": return !has || !r.values.includes(v!);
      case "exists": return has;
      case "!exists": return !has;
      case "gt": case "lt": {
        if (!has || !isInt64(v!)) return false;
        const [a, b] = [BigInt(v!), BigInt(r.value)];
        return r.op === "gt" ? a > b : a < b;
      }
    }
  });
}
