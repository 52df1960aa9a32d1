/**
 * A secret rule's own cases, checked: a secret left in a stored configuration is the worst bug this product can
 * have, and a rule that matches the line but masks a neighbouring word (`security wpa psk set-key ascii 0 <key>`
 * masked `ascii`) looks as if it worked. So each rule can state a line it must mask, with the secret values
 * marked, and a look-alike it must leave alone; the built-in templates state both for every rule.
 */
import { compileTemplatePattern } from "./template-patterns.ts";

/** What a secret rule is checked with: the fields of the template's `secrets` entry. */
export type SecretRuleCases = { pattern: string; replace: string; example?: string; look_alike?: string };

export type SecretRuleProblem = { key: "example" | "look_alike"; message: string };

/** `[[value]]` marks a secret value in an example. */
const MARKED = /\[\[([\s\S]+?)\]\]/g;

/** The example as the device prints it, its secret values, and the text around them (which must stay). */
export function parseSecretExample(example: string): { text: string; secrets: string[]; kept: string[] } {
  const secrets = [...example.matchAll(MARKED)].map((m) => m[1]!);
  return {
    text: example.replace(MARKED, "$1"),
    secrets,
    kept: example
      .split(MARKED)
      .filter((_, i) => i % 2 === 0)
      .map((s) => s.trim())
      .filter(Boolean),
  };
}

/**
 * What is wrong with a rule's example and look-alike, each on its own (the rule alone, not the template's other
 * rules): the example must lose every marked value and keep the text around them; the look-alike must not change.
 */
export function secretRuleProblems(rule: SecretRuleCases): SecretRuleProblem[] {
  const pattern = compileTemplatePattern(rule.pattern, "text");
  const problems: SecretRuleProblem[] = [];
  if (rule.example !== undefined) {
    const { text, secrets, kept } = parseSecretExample(rule.example);
    const masked = pattern.replaceAll(text, rule.replace);
    if (!secrets.length)
      problems.push({ key: "example", message: "must mark each secret value in it between [[ and ]]" });
    for (const s of secrets)
      if (masked.includes(s))
        problems.push({ key: "example", message: `the rule leaves the secret '${s}' in: ${masked}` });
    for (const k of kept)
      if (!masked.includes(k))
        problems.push({ key: "example", message: `the rule masks '${k}', which is not marked as secret: ${masked}` });
  }
  if (rule.look_alike !== undefined) {
    const changed = pattern.replaceAll(rule.look_alike, rule.replace);
    if (changed !== rule.look_alike)
      problems.push({ key: "look_alike", message: `the rule changes it, but it holds no secret: ${changed}` });
  }
  return problems;
}
