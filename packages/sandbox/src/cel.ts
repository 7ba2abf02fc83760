// The small part of CEL that kube-apiserver's `shardSelector` goes through: cel-go parses the
// whole expression first (so a syntax error is reported as cel-go/ANTLR words it), then the
// server walks the AST. This parser builds the same AST kinds (numbered as cel-go's ExprKind:
// call 1, ident 3, list 4, literal 5, map 6, select 7) for identifiers, selections, calls,
// indexing, list literals, `!`, `-`, `||`, `&&`, `in` and the comparison operators, and phrases the
// syntax errors the real server returns for the inputs checked in test/e2e/sharding.e2e.ts.

export type CelExpr =
  | { kind: 1; fn: string; args: CelExpr[]; target?: CelExpr }
  | { kind: 3; name: string }
  | { kind: 4; items: CelExpr[] }
  | { kind: 5; type: LiteralType; value: string }
  | { kind: 6 }
  | { kind: 7; operand: CelExpr; field: string };

type LiteralType = "string" | "int64" | "uint64" | "float64" | "bool" | "structpb.NullValue" | "[]uint8";

export class CelSyntaxError extends Error {}

type Token = { t: "id" | "str" | "bytes" | "int" | "uint" | "float" | "op" | "eof"; text: string; value?: string };

const PRIMARY_START =
  "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";
const OPS = [
  "||", "&&", "==", "!=", "<=", ">=", "<", ">", "!", "-", "+", "*", "/", "%", "(", ")", "[", "]", "{", "}", ".", ",",
  "?", ":",
];
const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"' };

function unescape(body: string): string {
  return body.replace(/\\(.)/g, (_, c: string) => ESCAPES[c] ?? c);
}

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (/\s/.test(c)) { i++; continue; }
    const quoted = /^([rRbB]{0,2})('''|"""|'|")/.exec(input.slice(i));
    if (quoted && (quoted[1] === "" || /^[rRbB]+$/.test(quoted[1]!))) {
      const [, prefix = "", quote = "'"] = quoted;
      const start = i + prefix.length + quote.length;
      const raw = /r/i.test(prefix);
      let j = start;
      while (j < input.length && !input.startsWith(quote, j) && !(quote.length === 1 && input[j] === "\n")) {
        j += !raw && input[j] === "\\" ? 2 : 1;
      }
      if (j >= input.length || !input.startsWith(quote, j)) {
        throw new CelSyntaxError(`token recognition error at: '${input.slice(i + prefix.length)}'`);
      }
      const body = input.slice(start, j);
      const text = input.slice(i, j + quote.length);
      tokens.push({ t: /b/i.test(prefix) ? "bytes" : "str", text, value: raw ? body : unescape(body) });
      i = j + quote.length;
      continue;
    }
    const number = /^(0x[0-9a-fA-F]+u?|\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+|\d+u?)/.exec(input.slice(i));
    if (number && !(c === "." && tokens.length && tokens[tokens.length - 1]!.t === "id")) {
      const text = number[1]!;
      const t = text.endsWith("u") ? "uint" : /[.eE]/.test(text) && !text.startsWith("0x") ? "float" : "int";
      tokens.push({ t, text, value: text });
      i += text.length;
      continue;
    }
    const ident = /^[_a-zA-Z][_a-zA-Z0-9]*/.exec(input.slice(i));
    if (ident) { tokens.push({ t: "id", text: ident[0] }); i += ident[0].length; continue; }
    const op = OPS.find((o) => input.startsWith(o, i));
    if (op) { tokens.push({ t: "op", text: op }); i += op.length; continue; }
    // ANTLR's lexer consumed the character that could not start a token and the next one
    throw new CelSyntaxError(`token recognition error at: '${input.slice(i, i + 2)}'`);
  }
  tokens.push({ t: "eof", text: "<EOF>" });
  return tokens;
}

const BINARY: Record<string, number> = {
  "||": 1, "&&": 2, "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3, "+": 4, "-": 4, "*": 5, "/": 5, "%": 5,
};

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

  private get next(): Token { return this.tokens[this.pos]!; }
  private shown(token: Token): string { return token.t === "eof" ? "<EOF>" : token.text; }
  private is(text: string): boolean { return this.next.t === "op" && this.next.text === text; }

  whole(): CelExpr {
    const expr = this.binary(1);
    if (this.next.t !== "eof") throw new CelSyntaxError(`extraneous input '${this.shown(this.next)}' expecting <EOF>`);
    return expr;
  }

  private binary(level: number): CelExpr {
    let left = level > 5 ? this.unary() : this.binary(level + 1);
    // `in` is a relation like `==`, named `@in` in cel-go's AST
    const isIn = () => level === 3 && this.next.t === "id" && this.next.text === "in";
    while ((this.next.t === "op" && BINARY[this.next.text] === level) || isIn()) {
      const op = this.tokens[this.pos++]!.text;
      const right = level > 5 ? this.unary() : this.binary(level + 1);
      left = { kind: 1, fn: op === "in" ? "@in" : `_${op}_`, args: [left, right] };
    }
    return left;
  }

  private unary(): CelExpr {
    if (this.is("!") || this.is("-")) {
      const op = this.tokens[this.pos++]!.text;
      return { kind: 1, fn: `${op}_`, args: [this.unary()] };
    }
    return this.member();
  }

  private member(): CelExpr {
    let expr = this.primary();
    for (;;) {
      if (this.is(".")) {
        this.pos++;
        if (this.next.t !== "id") {
          throw new CelSyntaxError(`mismatched input '${this.shown(this.next)}' expecting IDENTIFIER`);
        }
        const field = this.tokens[this.pos++]!.text;
        if (this.is("(")) expr = { kind: 1, fn: field, args: this.args(), target: expr };
        else expr = { kind: 7, operand: expr, field };
      } else if (this.is("[")) {
        this.pos++;
        const index = this.binary(1);
        this.expect("]");
        expr = { kind: 1, fn: "_[_]", args: [expr, index] };
      } else return expr;
    }
  }

  private args(): CelExpr[] {
    this.expect("(");
    const args: CelExpr[] = [];
    if (this.is(")")) { this.pos++; return args; }
    for (;;) {
      args.push(this.binary(1));
      if (this.is(",")) { this.pos++; continue; }
      this.expect(")");
      return args;
    }
  }

  private items(): CelExpr[] {
    const items = [this.binary(1)];
    while (this.is(",")) { this.pos++; items.push(this.binary(1)); }
    return items;
  }

  private expect(text: string): void {
    if (this.is(text)) { this.pos++; return; }
    if (this.next.t === "eof") throw new CelSyntaxError(`missing '${text}' at '<EOF>'`);
    throw new CelSyntaxError(`mismatched input '${this.shown(this.next)}' expecting '${text}'`);
  }

  private primary(): CelExpr {
    const token = this.next;
    const literal = (type: LiteralType, value: string): CelExpr => {
      this.pos++;
      return { kind: 5, type, value };
    };
    switch (token.t) {
      case "str": return literal("string", token.value ?? "");
      case "bytes": return literal("[]uint8", token.value ?? "");
      case "int": return literal("int64", token.text);
      case "uint": return literal("uint64", token.text);
      case "float": return literal("float64", token.text);
      case "id":
        if (token.text === "true" || token.text === "false") return literal("bool", token.text);
        if (token.text === "null") return literal("structpb.NullValue", token.text);
        this.pos++;
        if (this.is("(")) return { kind: 1, fn: token.text, args: this.args() };
        return { kind: 3, name: token.text };
      case "op":
        if (token.text === "(") { this.pos++; const inner = this.binary(1); this.expect(")"); return inner; }
        if (token.text === "[") {
          this.pos++;
          const items = this.is("]") ? [] : this.items();
          this.expect("]");
          return { kind: 4, items };
        }
    }
    throw new CelSyntaxError(`mismatched input '${this.shown(token)}' expecting ${PRIMARY_START}`);
  }
}

/** Parses a CEL expression (the subset above); throws CelSyntaxError with the ANTLR-style message. */
export function parseCel(input: string): CelExpr {
  return new Parser(tokenize(input)).whole();
}
