/**
 * The compliance engine: parse rConfig-format policy definitions and evaluate them against stored
 * configuration texts. Pure functions, no I/O; docs/compliance.md describes the format for users.
 *
 * Changes to the pair's contract (for the service side):
 * - RuleResult.sections is `OffendingSection[]` ({ line, header }), not string[]: the issue wants each offending
 *   section named with its line number. RuleResult also has optional `sectionsChecked` (section rules) and
 *   `omitted` (evidence entries past MAX_EVIDENCE).
 * - PolicyRule.section is `{ path: string[]; unless: string[] }` (path: nested section headers, outermost first).
 * - PolicyRule.index is 0-based; PolicyRule.line is the 1-based definition line the rule's block starts at.
 * - evaluatePolicy compiles a ParsedPolicy's patterns on first use and keeps them with that object (a WeakMap):
 *   parse a definition once per run and reuse the ParsedPolicy for every device.
 */
export type {
  ConfigFamily,
  EvaluateOptions,
  Evidence,
  OffendingSection,
  ParsedPolicy,
  PolicyEvaluation,
  PolicyProblem,
  PolicyRule,
  RuleMethod,
  RuleResult,
  SectionScope,
} from "./types.ts";
export { RULE_METHODS } from "./types.ts";
export { parsePolicy } from "./parse.ts";
export { evaluatePolicy, MAX_EVIDENCE } from "./evaluate.ts";
export { nestingByVendor, templateNesting, type TemplateNesting } from "./family.ts";
export { BUILTIN_POLICIES, type BuiltinPolicy } from "./builtins/index.ts";
