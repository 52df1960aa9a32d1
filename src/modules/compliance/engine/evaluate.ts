/**
 * Evaluating a parsed policy against one configuration text. The text is indexed once (ConfigText), each
 * pattern's matching lines are found once and shared by every rule and section asking (so a 50-rule policy
 * costs about one pass per distinct literal), and the section hierarchy is worked out only where a rule asks.
 */
import { compiledRule, type CompiledRule } from "./compiled.ts";
import { allIn, ConfigText, firstIn, lowerBound } from "./config-text.ts";
import { remediation, type UnitFailure } from "./remediation.ts";
import { LiteralScanner } from "./literal-scan.ts";
import type { LineMatcher } from "./matchers.ts";
import { hierarchy, type Hierarchy } from "./sections.ts";
import type {
  ConfigFamily,
  EvaluateOptions,
  Evidence,
  OffendingSection,
  ParsedPolicy,
  PolicyEvaluation,
  PolicyRule,
  RuleResult,
} from "./types.ts";

/** Evidence entries kept per rule; the rest are counted in RuleResult.omitted. */
export const MAX_EVIDENCE = 100;

/**
 * What a rule is checked against: the whole text, or one section's body (header: the section's line, name: that
 * line as evidence names it).
 */
type Unit = { from: number; to: number; header: number | null; name: string | undefined };

export class Evaluation {
  private tree: Hierarchy | null = null;
  /** The sections of each distinct scope asked about (rules scoped alike share them). */
  private readonly scoped = new Map<string, Unit[]>();
  /** Each of the policy's distinct patterns' lines (by its slot), worked out when first asked for. */
  private readonly matched: (Int32Array | undefined)[];
  readonly whole: Unit[];
  constructor(
    readonly config: ConfigText,
    readonly family: ConfigFamily,
    private readonly policy: CompiledPolicy,
  ) {
    this.whole = [{ from: 0, to: config.lineCount, header: null, name: undefined }];
    this.matched = new Array(policy.matchers.length);
  }
  /** The lines the pattern in `slot` matches, ascending. */
  hits(slot: number): Int32Array {
    return (this.matched[slot] ??= this.config.hits(this.policy.matchers[slot]!, this.policy.literalIds[slot]!));
  }
  get hierarchy(): Hierarchy {
    return (this.tree ??= hierarchy(this.config, this.family));
  }
  units(rule: ScopedRule): Unit[] {
    if (rule.scope === null) return this.whole;
    let units = this.scoped.get(rule.scope);
    if (!units) this.scoped.set(rule.scope, (units = sections(rule, this)));
    return units;
  }
}

/**
 * A compiled rule, its patterns', section path's and unless patterns' slots (the policy's distinct patterns,
 * numbered), and its scope's identity (null: the whole text), the same for rules with the same section and unless patterns.
 */
type ScopedRule = CompiledRule & {
  slots: { matchers: number[]; path: number[]; unless: number[] };
  scope: string | null;
};

type CompiledPolicy = {
  rules: PolicyRule[];
  compiled: ScopedRule[];
  scanner: LiteralScanner;
  /** The distinct patterns by slot, and each one's literal's id in the scanner (-1: not one it finds). */
  matchers: LineMatcher[];
  literalIds: Int32Array;
};
const compiledPolicies = new WeakMap<ParsedPolicy, CompiledPolicy>();

/** The policy's rules compiled and one scanner for all their literals, made on first use and kept. */
function compiledPolicy(policy: ParsedPolicy): CompiledPolicy {
  let c = compiledPolicies.get(policy);
  if (!c || c.rules !== policy.rules) {
    // One slot per distinct pattern, so rules sharing a pattern share its lines in an evaluation.
    const slotOf = new Map<string, number>();
    const matchers: LineMatcher[] = [];
    const slots = (ms: LineMatcher[]) =>
      ms.map((m) => slotOf.get(m.key) ?? (slotOf.set(m.key, matchers.length), matchers.push(m) - 1));
    const compiled = policy.rules.map(compiledRule).map((r) => ({
      ...r,
      slots: { matchers: slots(r.matchers), path: slots(r.path), unless: slots(r.unless) },
      scope: r.path.length === 0 ? null : JSON.stringify([r.path.map((m) => m.key), r.unless.map((m) => m.key)]),
    }));
    const scanner = new LiteralScanner(matchers.flatMap((m) => (m.literal === null ? [] : [m.literal])));
    const literalIds = Int32Array.from(matchers, (m) =>
      m.literal === null ? -1 : (scanner.idOf.get(m.literal) ?? -1),
    );
    c = { rules: policy.rules, compiled, scanner, matchers, literalIds };
    compiledPolicies.set(policy, c);
  }
  return c;
}

export function evaluatePolicy(policy: ParsedPolicy, config: string, options: EvaluateOptions = {}): PolicyEvaluation {
  const compiled = compiledPolicy(policy);
  const ctx = new Evaluation(new ConfigText(config, compiled.scanner), options.family ?? "indent", compiled);
  const rules = policy.rules.map((rule, k) => evaluateRule(rule, compiled.compiled[k]!, ctx));
  const passed = rules.reduce((n, r) => n + (r.passed ? 1 : 0), 0);
  return {
    compliant: passed === rules.length,
    score: rules.length === 0 ? 100 : Math.floor((passed * 100) / rules.length),
    rules,
  };
}

function evaluateRule(rule: PolicyRule, compiled: ScopedRule, ctx: Evaluation): RuleResult {
  const sectioned = compiled.scope !== null;
  const units = ctx.units(compiled);
  // Each pattern's lines, asked once for every unit (and not at all where a scoped rule has no section).
  const hits = units.length === 0 ? [] : compiled.slots.matchers.map((slot) => ctx.hits(slot));
  const out = new Outcome();
  for (const unit of units) checkUnit(rule, compiled, ctx.config, hits, unit, out);
  const passed = out.failures.length === 0;
  const result: RuleResult = {
    index: rule.index,
    description: rule.description,
    method: rule.method,
    passed,
    evidence: out.evidence,
    remediation: passed ? null : remediation(ctx, compiled.spec, out.failures),
  };
  if (out.omitted > 0) result.omitted = out.omitted;
  if (sectioned) {
    result.sectionsChecked = units.length;
    result.sections = out.offending;
  }
  return result;
}

/**
 * What a rule's units came to, gathered as they are checked. A failed rule's evidence is what failed; a passed
 * rule's is what satisfied it: a unit that passes adds its evidence only while no unit has failed.
 */
class Outcome {
  evidence: Evidence[] = [];
  omitted = 0;
  readonly failures: UnitFailure[] = [];
  readonly offending: OffendingSection[] = [];
  get collecting(): boolean {
    return this.failures.length === 0;
  }
  add(e: Evidence): void {
    if (this.evidence.length < MAX_EVIDENCE) this.evidence.push(e);
    else this.omitted++;
  }
  /** The unit failed (its evidence is added next): from the first failure on, only failures' evidence is kept. */
  failed(unit: Unit, failure: UnitFailure): void {
    if (unit.header !== null) this.offending.push({ line: unit.header + 1, header: unit.name! });
    if (this.failures.length === 0) {
      this.evidence = [];
      this.omitted = 0;
    }
    this.failures.push(failure);
  }
}

/** The sections a rule applies in: headers matching its path, nested, minus those an unless pattern matches. */
function sections(compiled: ScopedRule, ctx: Evaluation): Unit[] {
  const { config } = ctx;
  const { hierarchy } = ctx;
  const { path } = compiled.slots;
  let headers: ArrayLike<number> = ctx.hits(path[0]!);
  for (const level of path.slice(1)) {
    const hits = ctx.hits(level);
    const inner = new Set<number>();
    for (let k = 0; k < headers.length; k++) {
      const h = headers[k]!;
      for (const c of allIn(hits, h + 1, hierarchy.end(h))) inner.add(c);
    }
    headers = [...inner].sort((a, b) => a - b);
  }
  const units: Unit[] = [];
  const unless = compiled.slots.unless.map((slot) => ctx.hits(slot));
  for (let k = 0; k < headers.length; k++) {
    const h = headers[k]!;
    const end = hierarchy.end(h);
    if (unless.some((lines) => firstIn(lines, h, end) >= 0)) continue;
    units.push({ from: h + 1, to: end, header: h, name: config.line(h).trim() });
  }
  return units;
}

/** Evidence for line i, in the unit's section if it has one (and then with the key, else without). */
const found = (config: ConfigText, i: number, section: string | undefined): Evidence =>
  section === undefined ? { line: i + 1, text: config.line(i) } : { line: i + 1, text: config.line(i), section };
const missing = (pattern: string, section: string | undefined): Evidence =>
  section === undefined ? { line: null, text: pattern } : { line: null, text: pattern, section };

/** Where each pattern was found in a unit (reused: evaluation is synchronous). */
let foundAt = new Int32Array(16);

/** Checks the rule in one unit into `out`. `hits`: each of the rule's patterns' lines. */
function checkUnit(
  rule: PolicyRule,
  compiled: CompiledRule,
  config: ConfigText,
  hits: Int32Array[],
  unit: Unit,
  out: Outcome,
): void {
  const { from, to, header, name } = unit;

  switch (compiled.spec.mode) {
    case "all":
    case "any": {
      if (foundAt.length < hits.length) foundAt = new Int32Array(hits.length);
      let present = 0;
      for (let k = 0; k < hits.length; k++) if ((foundAt[k] = firstIn(hits[k]!, from, to)) >= 0) present++;
      const passed = compiled.spec.mode === "all" ? present === hits.length : present > 0;
      if (passed) {
        if (out.collecting)
          for (let k = 0; k < hits.length; k++) if (foundAt[k]! >= 0) out.add(found(config, foundAt[k]!, name));
        return;
      }
      const absent = rule.patterns.filter((_, k) => foundAt[k]! < 0);
      out.failed(unit, { header, missing: absent, offending: [] });
      for (const p of absent) out.add(missing(p, name));
      return;
    }
    case "none": {
      let lines: number[] = [];
      for (const matched of hits) for (const h of allIn(matched, from, to)) lines.push(h);
      if (lines.length === 0) return;
      if (hits.length > 1) lines = [...new Set(lines)].sort((a, b) => a - b);
      out.failed(unit, { header, missing: [], offending: lines });
      for (const h of lines) out.add(found(config, h, name));
      return;
    }
    case "block": {
      const failed = (evidence: Evidence[]) => {
        out.failed(unit, { header, missing: rule.patterns, offending: [] });
        for (const e of evidence) out.add(e);
      };
      const passed = (lines: number[]) => {
        if (out.collecting) for (const h of lines) out.add(found(config, h, name));
      };
      if (compiled.spec.kind === "block") {
        const first = hits[0]!;
        const last = to - hits.length;
        for (let k = lowerBound(first, from); k < first.length && first[k]! <= last; k++) {
          const h = first[k]!;
          let j = 1;
          while (j < hits.length && firstIn(hits[j]!, h + j, h + j + 1) >= 0) j++;
          if (j === hits.length) return passed(hits.map((_, j) => h + j));
        }
        return failed(rule.patterns.map((p) => missing(p, name)));
      }
      // flexible: each line after the one before, gaps allowed; taking the earliest match each time is optimal
      const lines: number[] = [];
      let at = from;
      for (let j = 0; j < hits.length; j++) {
        const h = firstIn(hits[j]!, at, to);
        if (h < 0)
          return failed([
            ...lines.map((l) => found(config, l, name)),
            ...rule.patterns.slice(j).map((p) => missing(p, name)),
          ]);
        lines.push(h);
        at = h + 1;
      }
      return passed(lines);
    }
  }
}
