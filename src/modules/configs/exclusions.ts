/**
 * Compare exclusions: regular expressions for lines that change without the configuration changing (clocks,
 * counters, uptimes). They decide whether a download is a new version and, on request, what a diff shows;
 * stored texts keep every line.
 */
import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { compareExclusions } from "../../db/schema/index.ts";

export const MAX_PATTERN_LENGTH = 300;

const repeats = (p: string, at: number) => p[at] === "*" || p[at] === "+" || (p[at] === "{" && /^\{\d+(,\d*)?\}/.test(p.slice(at)));

/**
 * Why a pattern could take exponential time on some line, or undefined. A heuristic, as any such check is:
 * it refuses a repeated group that itself repeats or holds alternatives (`(a+)+`, `(\w|\d)*`) and
 * backreferences, the shapes behind catastrophic backtracking, and lets everything else through.
 */
export function catastrophicShape(p: string): string | undefined {
  const groups: { repeats: boolean; alternates: boolean }[] = [{ repeats: false, alternates: false }];
  for (let i = 0; i < p.length; i++) {
    const ch = p[i];
    const top = groups[groups.length - 1]!;
    if (ch === "\\") {
      if (/[1-9k]/.test(p[i + 1] ?? "")) return "backreferences are not allowed";
      i++;
    } else if (ch === "[") {
      i++;
      if (p[i] === "^") i++;
      if (p[i] === "]") i++;
      while (i < p.length && p[i] !== "]") i += p[i] === "\\" ? 2 : 1;
    } else if (ch === "(") {
      groups.push({ repeats: false, alternates: false });
    } else if (ch === ")" && groups.length > 1) {
      const group = groups.pop()!;
      const repeated = repeats(p, i + 1);
      if (repeated && group.repeats) return "a repeated group may not contain a repetition (e.g. (a+)+): it can take exponential time";
      if (repeated && group.alternates) return "a repeated group may not contain alternatives (e.g. (a|b)*): use a character class such as [ab]*";
      groups[groups.length - 1]!.repeats ||= group.repeats || repeated;
    } else if (ch === "|") {
      top.alternates = true;
    } else if (repeats(p, i)) {
      top.repeats = true;
    }
  }
  return undefined;
}

/** The problem with a pattern as a user should read it, or undefined when it is usable. */
export function patternProblem(pattern: string, ignoreCase: boolean): string | undefined {
  if (pattern.length > MAX_PATTERN_LENGTH) return `pattern must be at most ${MAX_PATTERN_LENGTH} characters`;
  try {
    new RegExp(pattern, ignoreCase ? "i" : "");
  } catch (e) {
    return `pattern is not a valid regular expression: ${e instanceof Error ? e.message : String(e)}`;
  }
  const shape = catastrophicShape(pattern);
  return shape && `pattern is refused: ${shape}`;
}

type CompiledRule = { regex: RegExp; command: string | null };

/** The enabled rules, compiled once per use (a download, a diff). */
export class CompareExclusions {
  constructor(private readonly rules: readonly CompiledRule[]) {}

  /** Whether a line of this command's output is excluded; undefined when no rule applies to the command. */
  matcher(command: string): ((line: string) => boolean) | undefined {
    const regexes = this.rules.filter((r) => r.command === null || r.command === command).map((r) => r.regex);
    if (!regexes.length) return undefined;
    return (line) => regexes.some((re) => re.test(line));
  }

  /** The text without its excluded lines. */
  strip(command: string, text: string): string {
    const excluded = this.matcher(command);
    return excluded ? text.split("\n").filter((l) => !excluded(l)).join("\n") : text;
  }
}

export async function loadCompareExclusions(db: DbOrTx): Promise<CompareExclusions> {
  const rows = await db.select().from(compareExclusions).where(eq(compareExclusions.enabled, true));
  // Every stored pattern was checked on the way in; one that no longer compiles (another engine) is skipped, not fatal.
  const rules: CompiledRule[] = [];
  for (const r of rows) {
    try {
      rules.push({ regex: new RegExp(r.pattern, r.ignoreCase ? "i" : ""), command: r.command });
    } catch {
      continue;
    }
  }
  return new CompareExclusions(rules);
}
