import { inArray } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { policyRevisions, type RevisionRule } from "../../db/schema/index.ts";
import type { Evidence, OffendingSection, ParsedPolicy, RuleResult } from "./engine/index.ts";

/**
 * How a result's rules are stored. What every result of a policy revision shares (each rule's description and
 * method) is stored once per revision (policy_revisions); a result keeps per rule only what its evaluation found,
 * positionally and with defaults left out: a result of the built-in policies on bench:estate's 20 KB
 * configurations took 3,856 bytes on average as the engine's RuleResult objects, and takes 697 this way.
 *
 * A stored rule: `p` passed (1/0); `e` evidence as [line, text] or [line, text, section] (absent: none); `r` the
 * remediation lines (absent: null); `o` evidence entries omitted; `c` sections checked and `s` the offending
 * sections as [line, header] (a section rule has `c`; `s` absent: none). The data migration 0030 writes the same.
 */
export type StoredRule = {
  p: 0 | 1;
  e?: ([number | null, string] | [number | null, string, string])[];
  r?: string[];
  o?: number;
  c?: number;
  s?: [number, string][];
};

export function storedRules(rules: readonly RuleResult[]): StoredRule[] {
  return rules.map((rule) => {
    const out: StoredRule = { p: rule.passed ? 1 : 0 };
    if (rule.evidence.length)
      out.e = rule.evidence.map((e) => (e.section === undefined ? [e.line, e.text] : [e.line, e.text, e.section]));
    if (rule.remediation !== null) out.r = rule.remediation;
    if (rule.omitted !== undefined) out.o = rule.omitted;
    if (rule.sectionsChecked !== undefined) out.c = rule.sectionsChecked;
    if (rule.sections?.length) out.s = rule.sections.map((s) => [s.line, s.header]);
    return out;
  });
}

/** A revision's rules as policy_revisions keeps them. */
export const revisionRules = (policy: ParsedPolicy): RevisionRule[] =>
  policy.rules.map((r) => ({ index: r.index, description: r.description, method: r.method }));

/** The engine's RuleResults again, from a result's stored rules and its revision's (null: not recorded). */
export function ruleResults(
  stored: readonly StoredRule[],
  revision: readonly RevisionRule[] | undefined,
): RuleResult[] {
  return stored.map((s, k) => {
    const rule = revision?.[k];
    const out: RuleResult = {
      index: rule?.index ?? k,
      description: rule?.description ?? "",
      method: (rule?.method ?? "must_match_single_string") as RuleResult["method"],
      passed: s.p === 1,
      evidence: (s.e ?? []).map(
        ([line, text, section]): Evidence => (section === undefined ? { line, text } : { line, text, section }),
      ),
      remediation: s.r ?? null,
    };
    if (s.o !== undefined) out.omitted = s.o;
    if (s.c !== undefined) {
      out.sectionsChecked = s.c;
      out.sections = (s.s ?? []).map(([line, header]): OffendingSection => ({ line, header }));
    }
    return out;
  });
}

/** The rules of the revisions named, by hash: read once for a page of results, not once per result. */
export async function revisionsOf(db: DbOrTx, hashes: Iterable<string>): Promise<Map<string, RevisionRule[]>> {
  const wanted = [...new Set(hashes)];
  const found = new Map<string, RevisionRule[]>();
  for (let i = 0; i < wanted.length; i += 500) {
    const rows = await db
      .select()
      .from(policyRevisions)
      .where(inArray(policyRevisions.hash, wanted.slice(i, i + 500)));
    for (const r of rows) found.set(r.hash, r.rules);
  }
  return found;
}

/** Records the revisions' rules unless recorded (a revision's hash names its definition for good). */
export async function recordRevisions(db: DbOrTx, revisions: readonly { hash: string; policy: ParsedPolicy }[]) {
  const seen = new Set<string>();
  const rows = revisions.filter((r) => !seen.has(r.hash) && seen.add(r.hash));
  if (!rows.length) return;
  await db
    .insert(policyRevisions)
    .values(rows.map((r) => ({ hash: r.hash, rules: revisionRules(r.policy) })))
    .onConflictDoNothing();
}
