/**
 * A rule's patterns as line matchers. Each matcher names a literal that every line it matches contains, so
 * ConfigText finds candidate lines with indexOf over the whole text (native, fast) and runs RE2 only on those:
 * a 30 KB configuration is about 1,000 lines, and most patterns' literals occur on a handful.
 */
import { compileUserPattern, PatternError, type Pattern } from "../../../kernel/patterns/user-pattern.ts";
import { regexSource, type PatternKind } from "./methods.ts";
import { simpleRegexTest } from "./simple-regex.ts";

export type LineMatcher = {
  /** Same key, same lines matched: lets one evaluation share the work between rules. */
  readonly key: string;
  /** A case-sensitive string every matching line contains, or null when none is known (every line is tested). */
  readonly literal: string | null;
  /** The full test for a candidate line; null when containing `literal` is the whole test. */
  readonly test: ((line: string) => boolean) | null;
  /**
   * The same test on the line that is `text` from `from` to `to`, without making it a string, where that is
   * cheaper (an anchored literal: a comparison in place; a simple regex: simple-regex.ts).
   */
  readonly testAt?: (text: string, from: number, to: number) => boolean;
};

export const normalizeSpaces = (line: string) => line.trim().replace(/[ \t]+/g, " ");

/** A pattern compiled by the one module that runs user patterns (RE2), or its problem as a person reads it. */
function compileRegex(source: string, ignoreCase = false): Pattern | { error: string } {
  try {
    return compileUserPattern(source, { ignoreCase });
  } catch (e) {
    if (e instanceof PatternError) return { error: `pattern ${e.message}` };
    throw e;
  }
}

/** Distinct lines whose answer one matcher remembers; past this it starts over (a bound, not an eviction policy). */
const REMEMBERED_LINES = 4_096;

/**
 * A regex test that remembers its answer per line text. A fleet's configurations repeat the same lines (every
 * access port's ` switchport access vlan 10`), and RE2 costs about a microsecond per line where a Map lookup
 * costs tens of nanoseconds; the answer is a pure function of the line, so remembering it changes no result.
 */
function remembered(test: (line: string) => boolean): (line: string) => boolean {
  const answers = new Map<string, boolean>();
  return (line) => {
    let answer = answers.get(line);
    if (answer === undefined) {
      if (answers.size >= REMEMBERED_LINES) answers.clear();
      answers.set(ownCopy(line), (answer = test(line)));
    }
    return answer;
  };
}

/**
 * The line as a string of its own. A line is a slice of its configuration, and V8 keeps a slice as a pointer
 * into the whole text: remembered as it is, one device's `hostname` line kept that device's 30 KB text alive,
 * and the old-generation collections of thousands of such texts cost a fleet check more than its regexes.
 * Prefixing makes V8 copy the characters; the slice after it points into that short copy only.
 */
const ownCopy = (line: string) => ` ${line}`.slice(1);

const escapeRegex = (s: string) => s.replace(/[\\^$.|?*+()[\]{}]/g, "\\$&");

/** A regex written in a definition (`/.../flags` or bare) as a matcher, or why it cannot be one. */
export function regexMatcher(written: string): LineMatcher | { error: string } {
  const src = regexSource(written);
  if ("error" in src) return src;
  const compiled = compileRegex(src.source, src.caseInsensitive);
  if ("error" in compiled) return compiled;
  const key = `r${src.caseInsensitive ? "i" : ""}\0${src.source}`;
  // A regex that is only a literal, perhaps anchored (`^interface Vlan`, `^ shutdown$`), needs no regex engine.
  const plain = src.caseInsensitive ? null : /^(\^?)([^\\^$.|?*+()[\]{}]+)(\$?)$/.exec(src.source);
  if (plain) {
    const [, start, literal, end] = plain as unknown as [string, string, string, string];
    if (!start && !end) return { key, literal, test: null };
    // The literal holds no line break, so where it starts in the text at the line's start, it is within the line.
    const n = literal.length;
    if (start && end)
      return {
        key,
        literal,
        test: (line) => line === literal,
        testAt: (text, from, to) => to - from === n && text.startsWith(literal, from),
      };
    if (start)
      return {
        key,
        literal,
        test: (line) => line.startsWith(literal),
        testAt: (text, from) => text.startsWith(literal, from),
      };
    return {
      key,
      literal,
      test: (line) => line.endsWith(literal),
      testAt: (text, from, to) => to - from >= n && text.startsWith(literal, to - n),
    };
  }
  const test = remembered(compiled.test);
  const testAt = src.caseInsensitive ? null : simpleRegexTest(src.source, test);
  return { key, literal: src.caseInsensitive ? null : requiredLiteral(src.source), test, ...(testAt && { testAt }) };
}

/** A wildcard (`*` any run, `?` one character) matching a whole line, leading and trailing whitespace aside. */
export function wildcardMatcher(pattern: string): LineMatcher | { error: string } {
  const glob = pattern.trim();
  const source = `^\\s*${[...glob].map((c) => (c === "*" ? ".*" : c === "?" ? "." : escapeRegex(c))).join("")}\\s*$`;
  const compiled = compileRegex(source);
  if ("error" in compiled) return compiled;
  const longest = glob.split(/[*?]/).reduce((a, b) => (b.length > a.length ? b : a), "");
  const test = remembered(compiled.test);
  const testAt = simpleRegexTest(source, test);
  return { key: `w\0${glob}`, literal: longest || null, test, ...(testAt && { testAt }) };
}

export function matcherFor(kind: PatternKind, pattern: string): LineMatcher | { error: string } {
  switch (kind) {
    case "string":
      return { key: `s\0${pattern}`, literal: pattern, test: null };
    case "regex":
      return regexMatcher(pattern);
    case "wildcard":
      return wildcardMatcher(pattern);
    case "block": {
      const want = pattern.trim();
      return { key: `b\0${want}`, literal: want, test: (line) => line.trim() === want };
    }
    case "flexible-block": {
      const want = normalizeSpaces(pattern);
      const longest = want.split(" ").reduce((a, b) => (b.length > a.length ? b : a), "");
      return { key: `f\0${want}`, literal: longest, test: (line) => normalizeSpaces(line) === want };
    }
  }
}

/**
 * The longest run of characters every match of an RE2 pattern must contain, or null (fewer than 2 characters,
 * or the pattern is too involved to tell: alternation at the top, case-insensitive inline flags, \Q...\E).
 * Conservative by construction: groups, classes, escapes like \s and anything a quantifier makes optional end
 * a run, so the literal is always a substring of any line the pattern matches.
 */
export function requiredLiteral(source: string): string | null {
  if (/\(\?[A-Za-z-]*i/.test(source)) return null;
  let best = "";
  let run = "";
  const flush = () => {
    if (run.length > best.length) best = run;
    run = "";
  };
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "[") {
      const close = classEnd(source, i);
      if (close < 0) return null;
      if (depth === 0) flush();
      i = close;
      continue;
    }
    if (depth > 0) {
      if (c === "\\") i++;
      else if (c === "(") depth++;
      else if (c === ")") depth--;
      continue;
    }
    let literal: string;
    if (c === "\\") {
      const next = source[i + 1];
      if (next === undefined || next === "Q") return null;
      if (/[A-Za-z0-9]/.test(next)) {
        // \s \d \b \x41 \x{263a} \pL \p{Greek} ...: not a literal we can name, skip its argument
        flush();
        i++;
        if ((next === "x" || next === "p" || next === "P") && source[i + 1] === "{") {
          i = source.indexOf("}", i);
          if (i < 0) return null;
        } else if (next === "x") i += 2;
        else if (next === "p" || next === "P") i++;
        continue;
      }
      literal = next;
      i++;
    } else if (c === "|" || c === ")") {
      return null;
    } else if (c === "(") {
      flush();
      depth = 1;
      continue;
    } else if (c === "{") {
      const repeat = /^\{\d+(,\d*)?\}/.exec(source.slice(i));
      if (!repeat) return null;
      flush();
      i += repeat[0].length - 1;
      continue;
    } else if (".^$*+?".includes(c)) {
      flush();
      continue;
    } else {
      literal = c;
    }
    const after = source.slice(i + 1, i + 4);
    if (after.startsWith("*") || after.startsWith("?") || /^\{0[,}]/.test(after)) {
      flush(); // optional: not required
    } else if (after.startsWith("+") || after.startsWith("{")) {
      run += literal; // required once, but what follows may be another copy of it
      flush();
    } else {
      run += literal;
    }
  }
  flush();
  return best.length >= 2 ? best : null;
}

/** Index of the `]` closing the class opened at `open`, or -1. A `]` first in the class is a member. */
function classEnd(source: string, open: number): number {
  let i = open + 1;
  if (source[i] === "^") i++;
  if (source[i] === "]") i++;
  for (; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (c === "[" && source[i + 1] === ":") {
      const close = source.indexOf(":]", i + 2);
      if (close < 0) return -1;
      i = close + 1;
    } else if (c === "]") return i;
  }
  return -1;
}
