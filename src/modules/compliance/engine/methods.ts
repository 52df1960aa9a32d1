/**
 * What each rConfig method means here. rConfig documents the format (blocks of `// Description:`, `#[method]`,
 * pattern lines; regexes written `/.../`) but not every matching detail, so these are the choices, made to
 * match how rConfig policies are written in practice and to be predictable:
 *
 * - Strings (`*_single_string`, `*_from_array`): a pattern matches a configuration line that CONTAINS it,
 *   case-sensitively (rConfig searches the text for the string). So `ip http server` is also found in
 *   `no ip http server`; anchor with a regex (`^ip http server`) where that matters.
 * - Regexes (`*_regex`): RE2 syntax, tested against each line, so `^` and `$` are the line's start and end.
 *   rConfig's `/pattern/flags` form is accepted: the slashes are dropped, `i` makes it case-insensitive, `m`,
 *   `s` and `u` change nothing line by line; any other flag is refused.
 * - Wildcards (`wildcard_*`): `*` is any run of characters (also none), `?` exactly one, everything else
 *   literal; the pattern must match the WHOLE line, leading and trailing whitespace aside (as a shell glob
 *   matches a whole name). `snmp-server community * RO` matches `snmp-server community s3cr3t RO`.
 * - Modes: `must_match`: every pattern is found (single: the one pattern); `must_not_match`: none is found
 *   (`must_not_match_all_from_array` fails when ANY of its strings is present, as rConfig's does);
 *   `can_match_any`/`wildcard_match_any`: at least one is found.
 * - `match_code_block_from_array`: the pattern lines appear as consecutive configuration lines, in order, each
 *   equal to its pattern once leading and trailing whitespace is ignored.
 * - `match_code_block_flexible`: the pattern lines appear in order, other lines may come between them, and
 *   whitespace differences do not count (runs of spaces/tabs are one space, ends trimmed).
 */
import type { RuleMethod } from "./types.ts";

export type PatternKind = "string" | "regex" | "wildcard" | "block" | "flexible-block";
export type MethodMode = "all" | "none" | "any" | "block";
export type MethodSpec = { kind: PatternKind; mode: MethodMode; single: boolean };

export const METHODS: Record<RuleMethod, MethodSpec> = {
  must_match_single_string: { kind: "string", mode: "all", single: true },
  must_not_match_single_string: { kind: "string", mode: "none", single: true },
  must_match_regex: { kind: "regex", mode: "all", single: false },
  must_not_match_regex: { kind: "regex", mode: "none", single: false },
  can_match_any_from_array: { kind: "string", mode: "any", single: false },
  must_match_all_from_array: { kind: "string", mode: "all", single: false },
  must_not_match_all_from_array: { kind: "string", mode: "none", single: false },
  wildcard_match_single_string: { kind: "wildcard", mode: "all", single: true },
  wildcard_match_any_from_array: { kind: "wildcard", mode: "any", single: false },
  wildcard_match_all_from_array: { kind: "wildcard", mode: "all", single: false },
  match_code_block_from_array: { kind: "block", mode: "block", single: false },
  match_code_block_flexible: { kind: "flexible-block", mode: "block", single: false },
};

export const isRuleMethod = (name: string): name is RuleMethod => Object.hasOwn(METHODS, name);

/** rConfig's `/pattern/flags` form or a bare pattern, as an RE2 source and whether it ignores case. */
export function regexSource(written: string): { source: string; caseInsensitive: boolean } | { error: string } {
  const delimited = /^\/(.*)\/([A-Za-z]*)$/s.exec(written);
  if (!delimited) return { source: written, caseInsensitive: false };
  const [, source, flags] = delimited as unknown as [string, string, string];
  const unknown = [...flags].filter((f) => !"imsu".includes(f));
  if (unknown.length > 0) return { error: `unsupported regex flag "${unknown.join("")}" (supported: i, m, s, u)` };
  if (source === "") return { error: "empty regular expression" };
  return { source, caseInsensitive: flags.includes("i") };
}
