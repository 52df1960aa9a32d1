import { listInWords } from "./schema.ts";
import type { Seeded } from "./seed.ts";

/** A regular expression said in words, and a way to make a string that matches it. */
export type PatternInWords = { words: string; sample?: (random: Seeded) => string };

const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";

/** Patterns whose general reading would be clumsy. */
const KNOWN_PATTERNS: Record<string, PatternInWords> = {
  "^\\S+$": { words: "must not contain whitespace" },
  "^[^\\s@]+@[^\\s@]+$": {
    words: "an email address",
    sample: (r) => `${r.pick(["alex", "sam", "kim", "noor"])}${r.int(1, 99)}@example.com`,
  },
};

type CharClass = { negated: boolean; ranges: [string, string][]; escapes: string[]; chars: string[] };
type Part = { kind: "literal"; text: string } | { kind: "class"; cls: CharClass; min: number; max: number | undefined };

/** The parts of a simple anchored pattern: literals and character classes with counts; undefined for anything else. */
function parse(pattern: string): Part[] | undefined {
  if (!pattern.startsWith("^") || !pattern.endsWith("$") || pattern.endsWith("\\$")) return undefined;
  const body = pattern.slice(1, -1);
  const parts: Part[] = [];
  let i = 0;
  const literal = (ch: string) => {
    const last = parts.at(-1);
    if (last?.kind === "literal") last.text += ch;
    else parts.push({ kind: "literal", text: ch });
  };
  while (i < body.length) {
    const ch = body[i]!;
    let cls: CharClass | undefined;
    if (ch === "[") {
      const end = classEnd(body, i + 1);
      if (end < 0) return undefined;
      cls = parseClass(body.slice(i + 1, end));
      if (!cls) return undefined;
      i = end + 1;
    } else if (ch === "\\") {
      const next = body[i + 1];
      if (next === undefined) return undefined;
      if ("sSdDwW".includes(next)) cls = { negated: false, ranges: [], escapes: [next], chars: [] };
      else if (/[.^$*+?()[\]{}|\\/-]/.test(next)) {
        i += 2;
        if (isQuantifier(body[i])) return undefined;
        literal(next);
        continue;
      } else return undefined;
      i += 2;
    } else if (ch === ".") {
      cls = { negated: true, ranges: [], escapes: [], chars: [] };
      i += 1;
    } else if ("()|?*+{}".includes(ch)) {
      return undefined;
    } else {
      i += 1;
      if (isQuantifier(body[i])) return undefined;
      literal(ch);
      continue;
    }
    const quantifier = /^(?:\{(\d+)(?:(,)(\d*))?\}|([+*?]))/.exec(body.slice(i));
    let min = 1;
    let max: number | undefined = 1;
    if (quantifier) {
      i += quantifier[0].length;
      if (quantifier[4] === "+") [min, max] = [1, undefined];
      else if (quantifier[4] === "*") [min, max] = [0, undefined];
      else if (quantifier[4] === "?") [min, max] = [0, 1];
      else {
        min = Number(quantifier[1]);
        max = quantifier[2] ? (quantifier[3] ? Number(quantifier[3]) : undefined) : min;
      }
    }
    parts.push({ kind: "class", cls, min, max });
  }
  return parts;
}

const isQuantifier = (ch: string | undefined) => ch !== undefined && "{+*?".includes(ch);

function classEnd(body: string, from: number): number {
  for (let i = from; i < body.length; i++) {
    if (body[i] === "\\") i++;
    else if (body[i] === "]" && i > from) return i;
  }
  return -1;
}

function parseClass(text: string): CharClass | undefined {
  const cls: CharClass = { negated: text.startsWith("^"), ranges: [], escapes: [], chars: [] };
  const items: { ch: string; escape?: string }[] = [];
  for (let i = cls.negated ? 1 : 0; i < text.length; i++) {
    if (text[i] === "\\") {
      const next = text[++i];
      if (next === undefined) return undefined;
      if ("sSdDwW".includes(next)) items.push({ ch: "", escape: next });
      else if (/[a-zA-Z0-9]/.test(next))
        return undefined; // \b, \uXXXX and friends: too rare to put in words
      else items.push({ ch: next });
    } else items.push({ ch: text[i]! });
  }
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (item.escape) cls.escapes.push(item.escape);
    else if (items[i + 1]?.ch === "-" && !items[i + 1]!.escape && items[i + 2] && !items[i + 2]!.escape) {
      cls.ranges.push([item.ch, items[i + 2]!.ch]);
      i += 2;
    } else cls.chars.push(item.ch);
  }
  return cls;
}

const ESCAPE_WORDS: Record<string, string> = {
  s: "whitespace",
  S: "non-whitespace characters",
  d: "digits",
  D: "non-digits",
  w: "letters, digits and '_'",
  W: "characters other than letters, digits and '_'",
};

/** "letters, digits, '.', '_' or '-'" */
function classWords(cls: CharClass, conjunction: string): string {
  const has = (from: string, to: string) => cls.ranges.some(([a, b]) => a === from && b === to);
  const words: string[] = [];
  const hex = has("0", "9") && (has("a", "f") || has("A", "F")) && !has("a", "z") && !has("A", "Z");
  if (hex) words.push("hexadecimal digits");
  else {
    if (has("a", "z") && has("A", "Z")) words.push("letters");
    else if (has("a", "z")) words.push("lowercase letters");
    else if (has("A", "Z")) words.push("uppercase letters");
    if (has("0", "9")) words.push("digits");
  }
  const described = new Set(["a-z", "A-Z", "0-9", ...(hex ? ["a-f", "A-F"] : [])]);
  for (const [a, b] of cls.ranges) if (!described.has(`${a}-${b}`)) words.push(`'${a}' to '${b}'`);
  for (const e of cls.escapes) words.push(ESCAPE_WORDS[e]!);
  for (const c of cls.chars) words.push(c === "'" ? `"'"` : `'${c}'`);
  return listInWords(words, conjunction);
}

function countWords(min: number, max: number | undefined): string {
  if (max === undefined) return min <= 1 ? (min === 0 ? "any number of" : "one or more") : `at least ${min}`;
  if (min === max) return String(min);
  return min === 0 && max === 1 ? "an optional" : `${min} to ${max}`;
}

function partWords(part: Part): string {
  if (part.kind === "literal") return `'${part.text}'`;
  const { cls, min, max } = part;
  if (cls.negated && !cls.ranges.length && !cls.escapes.length && !cls.chars.length) {
    return `${countWords(min, max)} character${max === 1 ? "" : "s"}`;
  }
  if (cls.negated)
    return `${countWords(min, max)} character${max === 1 ? "" : "s"} other than ${classWords(cls, "and")}`;
  return `${countWords(min, max)} ${classWords(cls, "or")}`;
}

/** The characters a class allows, for samples; a negated class gets letters it does not exclude. */
function alphabet(cls: CharClass): string {
  if (cls.negated) {
    const excluded = alphabet({ ...cls, negated: false });
    return [...(LOWER + DIGITS)].filter((c) => !excluded.includes(c)).join("") || "x";
  }
  let chars = cls.chars.join("");
  for (const [a, b] of cls.ranges)
    for (let c = a.charCodeAt(0); c <= b.charCodeAt(0); c++) chars += String.fromCharCode(c);
  for (const e of cls.escapes) chars += e === "d" ? DIGITS : e === "w" ? LOWER + DIGITS + "_" : e === "s" ? " " : LOWER;
  // Samples read better in lowercase and digits when the class allows them.
  const plain = [...chars].filter((c) => (LOWER + DIGITS).includes(c)).join("");
  return plain.length >= 4 ? plain : chars;
}

function sampleOf(parts: Part[], random: Seeded): string {
  return parts
    .map((part) => {
      if (part.kind === "literal") return part.text;
      const chars = alphabet(part.cls);
      const length = part.max === undefined ? Math.max(part.min, 8) : Math.min(Math.max(part.min, 8), part.max);
      return Array.from({ length }, () => random.pick([...chars])).join("");
    })
    .join("");
}

/** A `pattern` in words, with a matching sample when it is simple enough to build one. */
export function patternInWords(pattern: string): PatternInWords {
  const known = KNOWN_PATTERNS[pattern];
  if (known) return known;
  const parts = parse(pattern);
  if (!parts || !parts.length) return { words: `must match the regular expression ${pattern}` };
  const [first, ...rest] = parts.map(partWords);
  const words =
    parts.length === 1 && parts[0]!.kind === "class"
      ? `made of ${first}`
      : `${first}${rest.map((w) => ` then ${w}`).join("")}`;
  return { words, sample: (random) => sampleOf(parts, random) };
}
