/**
 * A rule's patterns compiled once and kept with the rule object (a WeakMap, so the PolicyRule stays a plain
 * JSON-safe object): parsePolicy compiles while it validates, evaluatePolicy reuses that for every device.
 */
import { matcherFor, regexMatcher, type LineMatcher } from "./matchers.ts";
import { METHODS, type MethodSpec } from "./methods.ts";
import type { PolicyRule } from "./types.ts";

export type CompiledRule = { spec: MethodSpec; matchers: LineMatcher[]; path: LineMatcher[]; unless: LineMatcher[] };

const compiledRules = new WeakMap<PolicyRule, CompiledRule>();

/** `at` indexes the rule's patterns, then its section path, then its unless patterns. */
export function compileRule(rule: PolicyRule): { rule: CompiledRule } | { errors: { at: number; message: string }[] } {
  const spec = METHODS[rule.method];
  const errors: { at: number; message: string }[] = [];
  let at = 0;
  const compile = (make: (p: string) => LineMatcher | { error: string }, patterns: string[]) =>
    patterns.flatMap((p) => {
      const m = make(p);
      const here = at++;
      if ("error" in m) {
        errors.push({ at: here, message: m.error });
        return [];
      }
      return [m];
    });
  const matchers = compile((p) => matcherFor(spec.kind, p), rule.patterns);
  const path = compile(regexMatcher, rule.section?.path ?? []);
  const unless = compile(regexMatcher, rule.section?.unless ?? []);
  return errors.length > 0 ? { errors } : { rule: { spec, matchers, path, unless } };
}

export const remember = (rule: PolicyRule, compiled: CompiledRule) => compiledRules.set(rule, compiled);

/** The rule's compiled form; compiles a rule that did not come from parsePolicy (and throws if it cannot). */
export function compiledRule(rule: PolicyRule): CompiledRule {
  let compiled = compiledRules.get(rule);
  if (!compiled) {
    const result = compileRule(rule);
    if ("errors" in result)
      throw new Error(`rule ${rule.index + 1} (line ${rule.line}) does not compile: ${result.errors[0]!.message}`);
    compiled = result.rule;
    compiledRules.set(rule, compiled);
  }
  return compiled;
}
