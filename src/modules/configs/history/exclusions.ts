/**
 * Compare exclusions: regular expressions for lines that change without the configuration changing (clocks,
 * counters, uptimes). They decide whether a download is a new version and, on request, what a diff shows;
 * stored texts keep every line.
 */
import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client.ts";
import { compareExclusions } from "../../../db/schema/index.ts";
import {
  compileUserAlternatives,
  userPatternProblem,
  type PatternTest,
} from "../../../kernel/patterns/user-pattern.ts";

/** The problem with a pattern as a user should read it, or undefined when it is usable (src/kernel/patterns: RE2). */
export function patternProblem(pattern: string, ignoreCase: boolean): string | undefined {
  const problem = userPatternProblem(pattern, { ignoreCase });
  return problem && `pattern ${problem}`;
}

/** The enabled rules, compiled once per use (a download, a diff). */
export class CompareExclusions {
  /** By command: the rules for it and for every command, as one pattern (one pass of RE2 per line). */
  private readonly byCommand = new Map<string, PatternTest | undefined>();

  constructor(private readonly rules: readonly ExclusionRule[]) {}

  /** Whether a line of this command's output is excluded; undefined when no rule applies to the command. */
  matcher(command: string): ((line: string) => boolean) | undefined {
    if (!this.byCommand.has(command)) {
      const rules = this.rules.filter((r) => r.command === null || r.command === command);
      this.byCommand.set(
        command,
        rules.length
          ? compileUserAlternatives(rules.map((r) => ({ source: r.pattern, ignoreCase: r.ignoreCase })))
          : undefined,
      );
    }
    const pattern = this.byCommand.get(command);
    return pattern && ((line) => pattern.test(line));
  }

  /** The text without its excluded lines. */
  strip(command: string, text: string): string {
    const excluded = this.matcher(command);
    return excluded
      ? text
          .split("\n")
          .filter((l) => !excluded(l))
          .join("\n")
      : text;
  }
}

/** An enabled rule as stored: the collector reads them with the rest of a job's plan (collector/download.ts). */
export type ExclusionRule = { pattern: string; ignoreCase: boolean; command: string | null };

export function compileCompareExclusions(rules: readonly ExclusionRule[]): CompareExclusions {
  // Every stored pattern was checked on the way in; one stored before RE2 ran them (lookahead, say) is skipped, not fatal.
  return new CompareExclusions(rules.filter((r) => patternProblem(r.pattern, r.ignoreCase) === undefined));
}

export async function loadCompareExclusions(db: DbOrTx): Promise<CompareExclusions> {
  return compileCompareExclusions(await db.select().from(compareExclusions).where(eq(compareExclusions.enabled, true)));
}
