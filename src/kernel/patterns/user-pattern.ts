/**
 * Every regular expression a user supplies (search terms, compare exclusions, template prompts, filters and
 * secret patterns) is checked and compiled here, and runs in RE2 (re2js): matching takes time linear in the
 * text, whatever the pattern, so no pattern can stall the API or the collector. JavaScript's engine backtracks:
 * `.*.*.*.*.*.*!` against one long line took 14.5 s there. docs/patterns.md is the reference for users.
 *
 * The one exception is compileShippedPattern: the built-in templates' own patterns (our code, tested against
 * recorded sessions) run in JavaScript's engine, which is about 40 times faster on them (see docs/patterns.md).
 */
import { RE2JS, RE2JSException } from "re2js";

/** Longest pattern source accepted, in characters: longer ones are almost surely pasted text, not a pattern. */
export const MAX_PATTERN_LENGTH = 1000;

export type PatternOptions = {
  /** Letters match either case. */
  ignoreCase?: boolean;
  /** ^ and $ also match at line ends ("\n"), for patterns run over a whole text. */
  multiline?: boolean;
};

/** A compiled pattern, whichever engine runs it. */
export interface Pattern {
  readonly source: string;
  /** Capturing groups, for checking $n references in replacements. */
  readonly groupCount: number;
  /** Whether the pattern matches somewhere in the text. */
  test(text: string): boolean;
  /** The first match, as RegExp.prototype.exec gives it (groups that did not take part are undefined), or null. */
  exec(text: string): RegExpExecArray | null;
  /** Every match replaced, as String.prototype.replace with the g flag does it ($1, $<name>, $&, $$). */
  replaceAll(text: string, replacement: string): string;
}

/** A pattern that cannot be used; its message says why, for a person to fix it (no "pattern" prefix). */
export class PatternError extends Error {}

// Control characters other than tab: NUL and the like are never meant and can hide text in a pattern. Line
// breaks too: patterns are written on one line, with \n where they mean one.
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/;

const RE2_LACKS = "RE2, the engine that runs patterns, lacks: it matches in linear time, without backtracking";

/**
 * What RE2 lacks that JavaScript has, found outside character classes, so the message can name it instead of
 * RE2's "invalid or unsupported Perl syntax". Lookbehind, backreferences and lookahead need backtracking.
 */
function unsupportedSyntax(source: string): string | undefined {
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") {
      const next = source[i + 1] ?? "";
      if (/[1-9]/.test(next) || (next === "k" && source[i + 2] === "<")) {
        return `uses a backreference (\\${next}${next === "k" ? "<name>" : ""}), which ${RE2_LACKS}`;
      }
      i++;
    } else if (c === "[") {
      for (i++; i < source.length && source[i] !== "]"; i++) if (source[i] === "\\") i++;
    } else if (c === "(" && source[i + 1] === "?") {
      const head = source.slice(i + 2, i + 4);
      const kind =
        head[0] === "=" || head[0] === "!" ? "lookahead" : head === "<=" || head === "<!" ? "lookbehind" : undefined;
      if (kind) return `uses ${kind} ((?${head[0] === "<" ? head : head[0]}...)), which ${RE2_LACKS}`;
    }
  }
  return undefined;
}

/**
 * The checks every pattern passes before either engine sees it; also for text matched literally (compliance
 * strings), which has the same limits.
 */
export function patternTextProblem(source: string): string | undefined {
  if (source.length > MAX_PATTERN_LENGTH)
    return `must be at most ${MAX_PATTERN_LENGTH} characters (this one has ${source.length})`;
  const control = CONTROL.exec(source);
  if (control) {
    const code = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
    return `must not contain control characters (found U+${code} at position ${control.index + 1}); write \\n, \\t or \\x00 to match one`;
  }
  return undefined;
}

const flagsOf = (o: PatternOptions) =>
  (o.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0) | (o.multiline ? RE2JS.MULTILINE : 0);

/**
 * Compiles a user's pattern for RE2, or throws PatternError saying what to fix. JavaScript spellings RE2 reads
 * differently (`(?<name>`, `\uFFFF`, `\cA`, `[^]`, an unescaped `/`) are translated first, so a pattern written
 * for JavaScript means the same here when RE2 can express it at all.
 */
export function compileUserPattern(source: string, options: PatternOptions = {}): Pattern {
  return re2Pattern(source, translated(source), flagsOf(options));
}

/** The source in RE2's syntax, once it passed every check. */
function translated(source: string): string {
  const problem = patternTextProblem(source) ?? unsupportedSyntax(source);
  if (problem) throw new PatternError(problem);
  return RE2JS.translateRegExp(source);
}

function re2Pattern(source: string, re2Source: string, flags: number): Pattern {
  let re: RE2JS;
  try {
    re = RE2JS.compile(re2Source, flags);
  } catch (e) {
    if (!(e instanceof RE2JSException)) throw e;
    throw new PatternError(`is not a valid regular expression: ${e.message.replace(/^error parsing regexp: /, "")}`);
  }
  return {
    source,
    groupCount: re.groupCount(),
    test: (text) => re.test(text),
    exec: (text) => re.exec(text) as RegExpExecArray | null,
    // The cheap test (RE2's DFA) first: finding matches with their groups costs far more, and most texts have none.
    replaceAll: (text, replacement) => (re.test(text) ? re.matcher(text).replaceAll(replacement) : text),
  };
}

/** The problem with a user's pattern as a person should read it ("must be at most ..."), or undefined. */
export function userPatternProblem(source: string, options: PatternOptions = {}): string | undefined {
  try {
    compileUserPattern(source, options);
    return undefined;
  } catch (e) {
    if (e instanceof PatternError) return e.message;
    throw e;
  }
}

/**
 * Compiles one of the built-in templates' own patterns in JavaScript's engine. Only for patterns netkeep
 * ships (src/modules/templates/template-patterns.ts decides): they use lookahead, which RE2 lacks, and run on every download.
 */
export function compileShippedPattern(source: string, options: PatternOptions = {}): Pattern {
  const problem = patternTextProblem(source);
  if (problem) throw new PatternError(problem);
  return v8Pattern(source, (options.ignoreCase ? "i" : "") + (options.multiline ? "m" : ""));
}

/** Shipped line patterns as one alternation: each checked alone, the whole beyond the size limit if need be. */
export function compileShippedAlternatives(sources: readonly string[]): Pattern {
  for (const source of sources) compileShippedPattern(source);
  return v8Pattern(sources.map((s) => `(?:${s})`).join("|"), "");
}

function v8Pattern(source: string, flags: string): Pattern {
  let re: RegExp;
  let all: RegExp;
  try {
    re = new RegExp(source, flags);
    all = new RegExp(source, `${flags}g`);
  } catch (e) {
    throw new PatternError(
      `is not a valid regular expression: ${(e as Error).message.replace(/^Invalid regular expression: /, "")}`,
    );
  }
  return {
    source,
    groupCount: new RegExp(`${source}|`).exec("")!.length - 1,
    test: (text) => re.test(text),
    exec: (text) => re.exec(text),
    replaceAll: (text, replacement) => text.replace(all, replacement),
  };
}

/** A test of a line, which is all a combination of patterns can answer. */
export type PatternTest = Pick<Pattern, "test">;

// Two patterns may name a group alike, which one RE2 pattern cannot hold: such patterns are tested on their own.
const NAMES_A_GROUP = /\(\?P?<[^=!]/;

/**
 * A test that passes where any of these patterns matches, done in one pass: a line is tested once, not once
 * per pattern. Each keeps its own case option ((?i:...)), so patterns that differ in it still combine.
 */
export function compileUserAlternatives(patterns: readonly { source: string; ignoreCase?: boolean }[]): PatternTest {
  const alone: Pattern[] = [];
  const pieces: string[] = [];
  for (const p of patterns) {
    const compiled = compileUserPattern(p.source, p); // each on its own first, for its own message
    if (NAMES_A_GROUP.test(p.source)) alone.push(compiled);
    else pieces.push(`(?${p.ignoreCase ? "i" : ""}:${translated(p.source)})`);
  }
  const tests: PatternTest[] = [
    ...(pieces.length ? [re2Pattern(pieces.join("|"), pieces.join("|"), 0)] : []),
    ...alone,
  ];
  return tests.length === 1 ? tests[0]! : { test: (text) => tests.some((t) => t.test(text)) };
}
