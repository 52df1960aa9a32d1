/**
 * The lines that would fix a failed rule, when there is exactly one right answer:
 * - required plain lines missing (must_match strings, code blocks): the lines, inside their section (its
 *   header, then the lines indented under it) when the rule is section-scoped;
 * - forbidden lines present (must_not_match strings or regexes: either way the offending line is known): on
 *   indentation-nested CLIs (IOS-like) `no <line>`, under the line's parent sections; on Junos/VyOS
 *   set-format configurations `delete <rest of the set line>`.
 * Null otherwise: a required regex or wildcard says what is wrong, not what the line should be; `can_match_any` has
 * several answers; a forbidden line that is itself a `no ...` has no safe negation; hierarchical Junos and
 * FortiOS edits are left to a person.
 */
import type { ConfigText } from "./config-text.ts";
import type { MethodSpec } from "./methods.ts";
import type { Hierarchy } from "./sections.ts";
import type { ConfigFamily } from "./types.ts";

/** What remediation reads of an evaluation (evaluate.ts): the text, how it nests, and its sections. */
type Evaluated = { readonly config: ConfigText; readonly family: ConfigFamily; readonly hierarchy: Hierarchy };

/** What one unit (the whole text, or one section) lacks or has too much of. */
export type UnitFailure = { header: number | null; missing: string[]; offending: number[] };

const leadingSpace = (s: string) => /^\s/.test(s);

export function remediation(ctx: Evaluated, spec: MethodSpec, failures: UnitFailure[]): string[] | null {
  if (spec.mode === "none") return removeLines(ctx, failures);
  if (spec.kind === "regex" || spec.kind === "wildcard" || spec.mode === "any") return null;
  return addLines(ctx, failures, spec.mode === "block");
}

function addLines(ctx: Evaluated, failures: UnitFailure[], block: boolean): string[] | null {
  const out: string[] = [];
  for (const f of failures) {
    if (f.header === null) {
      // A nested line with no section to put it in (a code block's first line brings its own).
      if (block ? leadingSpace(f.missing[0]!) : f.missing.some(leadingSpace)) return null;
      if (ctx.family === "braces" && !f.missing.every((l) => l.startsWith("set "))) return null;
      if (ctx.family === "fortios") return null;
      out.push(...f.missing);
      continue;
    }
    if (ctx.family !== "indent") return null;
    out.push(...[...ancestors(ctx, f.header), f.header].map((i) => ctx.config.line(i).trimEnd()));
    const indent = " ".repeat(indentOf(ctx.config.line(f.header)) + 1);
    const prefix = leadingSpace(f.missing[0]!) ? "" : indent;
    out.push(...f.missing.map((l) => prefix + l));
  }
  return out;
}

function removeLines(ctx: Evaluated, failures: UnitFailure[]): string[] | null {
  const { config, family } = ctx;
  const out: string[] = [];
  let emitted: number[] = [];
  for (const f of failures) {
    for (const o of f.offending) {
      const line = config.line(o);
      const command = line.trim();
      if (family === "braces") {
        if (!command.startsWith("set ") || ctx.hierarchy.parent(o) !== -1) return null;
        out.push(`delete ${command.slice(4)}`);
        continue;
      }
      if (family !== "indent" || /^no\s/.test(command)) return null;
      const chain = ancestors(ctx, o);
      if (chain.join() !== emitted.join()) {
        const shared = chain.findIndex((c, k) => emitted[k] !== c);
        for (const c of chain.slice(shared < 0 ? chain.length : shared)) out.push(config.line(c).trimEnd());
        emitted = chain;
      }
      out.push(`${" ".repeat(indentOf(line))}no ${command}`);
    }
  }
  return out;
}

/** Line i's enclosing section headers, outermost first. */
function ancestors(ctx: Evaluated, i: number): number[] {
  const { hierarchy } = ctx;
  const chain: number[] = [];
  for (let p = hierarchy.parent(i); p >= 0; p = hierarchy.parent(p)) chain.unshift(p);
  return chain;
}

const indentOf = (line: string) => line.length - line.trimStart().length;
