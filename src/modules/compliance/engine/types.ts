/**
 * The compliance engine's data: a parsed policy and what evaluating it against one configuration text gives.
 * Plain JSON-safe objects, so a service can store a RuleResult as it is.
 */

/** rConfig's twelve policy methods, as they are written in `#[<method>]` lines. Semantics: docs in methods.ts. */
export const RULE_METHODS = [
  "must_match_single_string",
  "must_not_match_single_string",
  "must_match_regex",
  "must_not_match_regex",
  "can_match_any_from_array",
  "must_match_all_from_array",
  "must_not_match_all_from_array",
  "wildcard_match_single_string",
  "wildcard_match_any_from_array",
  "wildcard_match_all_from_array",
  "match_code_block_from_array",
  "match_code_block_flexible",
] as const;
export type RuleMethod = (typeof RULE_METHODS)[number];

/**
 * netkeep's section scoping: the rule applies inside every section whose header matches `path[0]` (and, for a
 * longer path, inside those, every section whose header matches the next entry), except sections where a line
 * (header included) matches one of `unless`. Entries are regex sources as written in the definition.
 */
export type SectionScope = { path: string[]; unless: string[] };

export type PolicyRule = {
  /** 0-based position among the policy's rules. */
  index: number;
  /** 1-based line of the definition where the rule's block starts. */
  line: number;
  description: string;
  method: RuleMethod;
  patterns: string[];
  section?: SectionScope;
};
export type ParsedPolicy = { rules: PolicyRule[] };

/** What is wrong with a definition: 1-based line of the definition and what to fix there. */
export type PolicyProblem = { line: number; message: string };

/**
 * A line of the configuration that matched or offends (line: 1-based in the configuration), or, with line null,
 * a required pattern that is missing. `section` is the header line of the section it was looked for in.
 */
export type Evidence = { line: number | null; text: string; section?: string };

/** A section a section-scoped rule failed in: its header line as in the configuration and its 1-based line. */
export type OffendingSection = { line: number; header: string };

export type RuleResult = {
  index: number;
  description: string;
  method: RuleMethod;
  passed: boolean;
  evidence: Evidence[];
  /** Evidence entries left out past the per-rule cap (MAX_EVIDENCE); absent when none were. */
  omitted?: number;
  /** Section rules only: how many sections the rule was checked in, and the ones it failed in. */
  sectionsChecked?: number;
  sections?: OffendingSection[];
  /** Lines that would fix a failed rule when the fix is deterministic; null when it is not, or the rule passed. */
  remediation: string[] | null;
};

export type PolicyEvaluation = {
  compliant: boolean;
  /** Share of rules passed, 0-100, rounded down: 100 only when every rule passed. */
  score: number;
  rules: RuleResult[];
};

/**
 * How a configuration nests: by indentation (Cisco IOS/IOS-XE/NX-OS, Arista EOS, HPE Comware, ...), by braces
 * (Junos, VyOS), or FortiOS's `config`/`edit`/`next`/`end`.
 */
export type ConfigFamily = "indent" | "braces" | "fortios";

export type EvaluateOptions = { family?: ConfigFamily };
