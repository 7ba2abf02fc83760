// What Go's encoding/json and encoding/base64 say of input they cannot read, for the answers kube-apiserver
// words with them: a body that is not JSON ("invalid character 'n' looking for beginning of object key string",
// "unexpected end of JSON input"), JSON of the wrong shape ("cannot unmarshal array into Go value of type ..."),
// a continue token that is not base64url ("illegal base64 data at input byte 3"). Go scans the whole input for
// its syntax before it decodes anything, byte by byte: so does this.

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const ESCAPES = new Set([..."bfnrt\\/\""].map((c) => c.charCodeAt(0)));
const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;
const isHex = (c: number | undefined) => c !== undefined && /[0-9a-fA-F]/.test(String.fromCharCode(c));

/** Go's quoteChar: a byte as the scanner's message shows it (a byte over 0x7f as the rune of that number) */
function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return "'\"'";
  const named: Record<number, string> = { 7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r" };
  if (named[c]) return `'${named[c]}'`;
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, "0")}'`;
  if ((c >= 0x80 && c <= 0xa0) || c === 0xad) return `'\\u${c.toString(16).padStart(4, "0")}'`;
  return `'${String.fromCharCode(c)}'`;
}

class SyntaxError_ extends Error {}
const END = "unexpected end of JSON input";

/** a recursive reading of JSON with Go's scanner's messages at the first byte it refuses */
class Scanner {
  i = 0;
  constructor(private readonly b: Uint8Array) {}

  private fail(context: string): never {
    if (this.i >= this.b.length) throw new SyntaxError_(END);
    throw new SyntaxError_(`invalid character ${quoteChar(this.b[this.i]!)} ${context}`);
  }
  private skip(): number | undefined {
    while (this.i < this.b.length && WHITESPACE.has(this.b[this.i]!)) this.i++;
    return this.b[this.i];
  }

  document(): void {
    this.value();
    if (this.skip() !== undefined) this.fail("after top-level value");
  }

  value(): void {
    const c = this.skip();
    if (c === 0x7b) return this.object();
    if (c === 0x5b) return this.array();
    if (c === 0x22) return this.string();
    if (c === 0x2d || isDigit(c)) return this.number();
    for (const word of ["true", "false", "null"]) if (c === word.charCodeAt(0)) return this.literal(word);
    this.fail("looking for beginning of value");
  }

  /** an object's or a list's elements, comma-separated up to `close`; `after` says where a stray byte is */
  private elements(close: number, element: () => void, after: string): void {
    this.i++;
    if (this.skip() === close) { this.i++; return; }
    for (;;) {
      element();
      const c = this.skip();
      this.i++;
      if (c === close) return;
      if (c !== 0x2c) { this.i--; this.fail(after); }
    }
  }

  private object(): void {
    this.elements(0x7d, () => {
      if (this.skip() !== 0x22) this.fail("looking for beginning of object key string");
      this.string();
      if (this.skip() !== 0x3a) this.fail("after object key");
      this.i++;
      this.value();
    }, "after object key:value pair");
  }

  private array(): void {
    this.elements(0x5d, () => this.value(), "after array element");
  }

  private string(): void {
    this.i++;
    for (;;) {
      const c = this.b[this.i];
      if (c === undefined) this.fail("");
      if (c === 0x22) { this.i++; return; }
      if (c < 0x20) this.fail("in string literal");
      this.i++;
      if (c !== 0x5c) continue;
      if (this.b[this.i] === 0x75) {
        this.i++;
        for (let k = 0; k < 4; k++, this.i++) {
          if (!isHex(this.b[this.i])) this.fail("in \\u hexadecimal character escape");
        }
      } else if (ESCAPES.has(this.b[this.i]!)) this.i++;
      else this.fail("in string escape code");
    }
  }

  private digits(): void {
    while (isDigit(this.b[this.i])) this.i++;
  }

  private number(): void {
    if (this.b[this.i] === 0x2d) {
      this.i++;
      if (!isDigit(this.b[this.i])) this.fail("in numeric literal");
    }
    if (this.b[this.i] === 0x30) this.i++; else this.digits();
    if (this.b[this.i] === 0x2e) {
      this.i++;
      if (!isDigit(this.b[this.i])) this.fail("after decimal point in numeric literal");
      this.digits();
    }
    if (this.b[this.i] === 0x65 || this.b[this.i] === 0x45) {
      this.i++;
      if (this.b[this.i] === 0x2b || this.b[this.i] === 0x2d) this.i++;
      if (!isDigit(this.b[this.i])) this.fail("in exponent of numeric literal");
      this.digits();
    }
  }

  private literal(word: string): void {
    for (let k = 0; k < word.length; k++, this.i++) {
      const expected = word.charCodeAt(k);
      if (this.b[this.i] !== expected) this.fail(`in literal ${word} (expecting ${quoteChar(expected)})`);
    }
  }
}

/** Go's json.Unmarshal syntax error for these bytes, or undefined when they are one JSON value */
export function goJsonSyntaxError(bytes: Uint8Array): string | undefined {
  try {
    new Scanner(bytes).document();
    return undefined;
  } catch (e) {
    if (e instanceof SyntaxError_) return e.message;
    throw e;
  }
}

/** the word Go's UnmarshalTypeError names a JSON value by */
export function goValueWord(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (typeof value === "boolean") return "bool";
  return typeof value === "object" ? "object" : typeof value;
}

/** fmt's %v of a value encoding/json decoded into interface{}: maps with sorted keys, floats as %g would say them */
export function goSprint(value: unknown): string {
  if (value === null || value === undefined) return "<nil>";
  if (Array.isArray(value)) return `[${value.map(goSprint).join(" ")}]`;
  if (typeof value === "object") {
    const entries = Object.keys(value).sort().map((k) => `${k}:${goSprint((value as any)[k])}`);
    return `map[${entries.join(" ")}]`;
  }
  if (typeof value !== "number") return String(value);
  // %v of a float64: shortest digits, an exponent (two digits at least) below 1e-4 and from 1e21
  const exponent = value === 0 ? 0 : Math.floor(Math.log10(Math.abs(value)));
  if (exponent >= -4 && exponent < 21) return String(value);
  const [mantissa, exp] = value.toExponential().split("e") as [string, string];
  const sign = exp.startsWith("-") ? "-" : "+";
  return `${mantissa}e${sign}${exp.replace(/^[-+]/, "").padStart(2, "0")}`;
}

const URL_ALPHABET = /[A-Za-z0-9_-]/;

/** base64.RawURLEncoding.DecodeString: the bytes, or Go's CorruptInputError's words */
export function decodeRawUrlBase64(s: string): { bytes: Uint8Array } | { error: string } {
  let count = 0;
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === "\n" || c === "\r") continue;
    if (!URL_ALPHABET.test(c)) return { error: `illegal base64 data at input byte ${i}` };
    count++;
    last = i;
  }
  if (count % 4 === 1) return { error: `illegal base64 data at input byte ${last}` };
  return { bytes: new Uint8Array(Buffer.from(s.replace(/[\r\n]/g, ""), "base64url")) };
}

const STD_ALPHABET = /[A-Za-z0-9+/]/;
const skipsNewlines = (s: string, i: number) => {
  while (i < s.length && (s[i] === "\n" || s[i] === "\r")) i++;
  return i;
};

/**
 * What base64.StdEncoding (padded) says of a []byte field's text, as encoding/json decodes it: undefined when it
 * decodes, else Go's CorruptInputError ("illegal base64 data at input byte 3"), found quantum by quantum as Go does.
 */
export function goStdBase64Error(s: string): string | undefined {
  const corrupt = (at: number) => `illegal base64 data at input byte ${at}`;
  let si = 0;
  for (;;) {
    let j = 0;
    for (; j < 4; j++) {
      if (si === s.length) return j === 0 ? undefined : corrupt(si - j);
      const c = s[si++]!;
      if (STD_ALPHABET.test(c)) continue;
      if (c === "\n" || c === "\r") { j--; continue; }
      if (c !== "=" || j < 2) return corrupt(si - 1);
      if (j === 2) {
        si = skipsNewlines(s, si);
        if (si === s.length) return corrupt(s.length);
        if (s[si] !== "=") return corrupt(si - 1);
        si++;
      }
      si = skipsNewlines(s, si);
      return si < s.length ? corrupt(si) : undefined;
    }
  }
}
