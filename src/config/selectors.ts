// The syntax of label and field selectors as the API server parses them, checked when the
// config is read: a selector the server would reject must fail before anything starts, with
// the part that is wrong named, not as a 400 on the first LIST.

const NAME = "[a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?";
const LABEL_KEY = new RegExp(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?${NAME}$`);
const LABEL_VALUE = new RegExp(`^(${NAME})?$`);
const FIELD_PATH = /^[a-zA-Z][a-zA-Z0-9]*(\.[a-zA-Z][a-zA-Z0-9]*)*$/;

/** Splits on the commas outside parentheses ("a in (x,y),b" → two requirements). */
function requirements(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of selector) {
    if (char === "(") depth++;
    if (char === ")") depth--;
    if (char === "," && depth === 0) {
      parts.push(current.trim());
      current = "";
    } else current += char;
  }
  parts.push(current.trim());
  return parts;
}

function labelKeyProblem(key: string): string | undefined {
  const name = key.includes("/") ? key.slice(key.indexOf("/") + 1) : key;
  if (LABEL_KEY.test(key) && name.length <= 63) return undefined;
  return `"${key}" is not a label key ` +
    '(a name of at most 63 letters, digits, "-", "_", ".", optionally prefixed by a DNS subdomain and "/")';
}

function labelValueProblem(value: string): string | undefined {
  if (LABEL_VALUE.test(value) && value.length <= 63) return undefined;
  return `"${value}" is not a label value ` +
    '(at most 63 letters, digits, "-", "_", ".", starting and ending alphanumeric)';
}

/** What is wrong with a label selector ("app=web,tier in (a,b),!legacy"), or undefined when it parses. */
export function labelSelectorProblem(selector: string): string | undefined {
  for (const part of requirements(selector)) {
    if (part === "") return "an empty requirement (a stray comma)";
    let match: RegExpMatchArray | null;
    if ((match = part.match(/^(\S+)\s+(in|notin)\s*\((.*)\)$/))) {
      const values = (match[3] ?? "").split(",").map((value) => value.trim());
      if (values.length === 1 && values[0] === "") return `"${part}": "${match[2]}" needs at least one value`;
      const problem = labelKeyProblem(match[1]!) ?? values.map(labelValueProblem).find(Boolean);
      if (problem) return `"${part}": ${problem}`;
    } else if ((match = part.match(/^([^=!\s<>]+)\s*(==|=|!=)\s*(\S*)$/))) {
      const problem = labelKeyProblem(match[1]!) ?? labelValueProblem(match[3] ?? "");
      if (problem) return `"${part}": ${problem}`;
    } else if ((match = part.match(/^([^\s<>]+)\s*(<|>)\s*(\S+)$/))) {
      if (!/^-?\d+$/.test(match[3]!)) return `"${part}": "${match[2]}" compares with an integer`;
      const problem = labelKeyProblem(match[1]!);
      if (problem) return `"${part}": ${problem}`;
    } else if ((match = part.match(/^!\s*(\S+)$/))) {
      const problem = labelKeyProblem(match[1]!);
      if (problem) return `"${part}": ${problem}`;
    } else if (labelKeyProblem(part) !== undefined) {
      return `"${part}": expected key, !key, key=value, key!=value, key in (values) or key notin (values)`;
    }
  }
  return undefined;
}

/** What is wrong with a field selector ("metadata.name=x,status.phase!=Done"), or undefined when it parses. */
export function fieldSelectorProblem(selector: string): string | undefined {
  for (const part of requirements(selector)) {
    if (part === "") return "an empty requirement (a stray comma)";
    const match = part.match(/^([^=!]+)(==|=|!=)(.*)$/);
    if (!match) return `"${part}": expected field=value, field==value or field!=value`;
    const path = match[1]!.trim();
    if (!FIELD_PATH.test(path)) return `"${part}": "${path}" is not a field path like metadata.name`;
  }
  return undefined;
}
