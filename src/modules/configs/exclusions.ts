/**
 * Compare exclusions: regular expressions for lines that change without the configuration changing (clocks,
 * counters, uptimes). They decide whether a download is a new version and, on request, what a diff shows;
 * stored texts keep every line.
 */
import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { compareExclusions } from "../../db/schema/index.ts";
import { catastrophicShape } from "./regex-shape.ts";

export const MAX_PATTERN_LENGTH = 300;

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

/** An enabled rule as stored: the collector reads them with the rest of a job's plan (collector/download.ts). */
export type ExclusionRule = { pattern: string; ignoreCase: boolean; command: string | null };

export function compileCompareExclusions(rules: readonly ExclusionRule[]): CompareExclusions {
  // Every stored pattern was checked on the way in; one that no longer compiles (another engine) is skipped, not fatal.
  const compiled: CompiledRule[] = [];
  for (const r of rules) {
    try {
      compiled.push({ regex: new RegExp(r.pattern, r.ignoreCase ? "i" : ""), command: r.command });
    } catch {
      continue;
    }
  }
  return new CompareExclusions(compiled);
}

export async function loadCompareExclusions(db: DbOrTx): Promise<CompareExclusions> {
  return compileCompareExclusions(await db.select().from(compareExclusions).where(eq(compareExclusions.enabled, true)));
}
