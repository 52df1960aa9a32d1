/**
 * The one door between compliance rules and a regex engine. User patterns run in RE2 (re2js): linear time in
 * the line's length whatever the pattern, so a rule like `(a|aa)+$` cannot stall the service the way it would
 * stall JavaScript's backtracking RegExp. Kept small on purpose: compile (with the reasons a pattern is refused)
 * and test a line.
 */
import { RE2JS } from "re2js";

export const MAX_PATTERN_LENGTH = 1000;
// C0 controls but tab, and DEL: never part of a configuration line, often a paste accident.
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;

export type LineRegex = { readonly source: string; test(line: string): boolean };

/** Why a pattern cannot be used as it is, or null: too long, control characters. Applies to every kind. */
export function patternTextProblem(source: string): string | null {
  if (source.length > MAX_PATTERN_LENGTH) return `pattern is ${source.length} characters long; at most ${MAX_PATTERN_LENGTH} are allowed`;
  if (CONTROL.test(source)) return "pattern contains a control character";
  return null;
}

/** Compiles an RE2 pattern, or says why it cannot (the engine's own message, which names the offending part). */
export function compileRegex(source: string, options: { caseInsensitive?: boolean } = {}): { regex: LineRegex } | { error: string } {
  const problem = patternTextProblem(source);
  if (problem) return { error: problem };
  try {
    const re = RE2JS.compile(source, options.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
    return { regex: { source, test: (line) => re.test(line) } };
  } catch (e) {
    return { error: `invalid regular expression: ${e instanceof Error ? e.message : String(e)}` };
  }
}
