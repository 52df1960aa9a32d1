/**
 * rConfig's policy definition format, read tolerantly: blocks separated by blank lines, each a
 * `// Description: <text>` line, a `#[<method>]` line and the method's pattern lines. Other `//` lines are
 * comments; extra blank lines, Windows line endings and trailing spaces change nothing. Text after `]` on the
 * method line is the first pattern (rConfig's docs show both styles).
 *
 * netkeep's section scoping adds `#[section: <regex>]` (repeatable: each one nests inside the one before) and
 * `#[unless: <regex>]` lines, written with the block's header lines (before its patterns). They look like a
 * method annotation but cannot be mistaken for one (a colon, never in a method name).
 *
 * Every pattern is compiled here, so a definition that parses evaluates; the compiled matchers are kept with
 * the returned policy (see compiled.ts) and reused by every evaluation of it.
 */
import { isRuleMethod, METHODS } from "./methods.ts";
import { compileRule, remember } from "./compiled.ts";
import { patternTextProblem } from "../../../kernel/patterns/user-pattern.ts";
import type { ParsedPolicy, PolicyProblem, PolicyRule, RuleMethod } from "./types.ts";

type Block = {
  line: number;
  description: string | null;
  method: RuleMethod | null;
  methodLine: number;
  patterns: { text: string; line: number }[];
  path: { text: string; line: number }[];
  unless: { text: string; line: number }[];
  broken: boolean;
};

const ANNOTATION = /^#\[\s*([^\]]*?)\s*\](.*)$/;
const DESCRIPTION = /^\/\/\s*Description\s*:\s*(.*)$/i;

export function parsePolicy(definition: string): { policy: ParsedPolicy; problems: PolicyProblem[] } {
  const problems: PolicyProblem[] = [];
  const blocks: Block[] = [];
  let block = null as Block | null;
  const problem = (line: number, message: string) => {
    problems.push({ line, message });
    if (block) block.broken = true;
  };
  const start = (line: number): Block => {
    block = {
      line,
      description: null,
      method: null,
      methodLine: line,
      patterns: [],
      path: [],
      unless: [],
      broken: false,
    };
    blocks.push(block);
    return block;
  };

  const lines = definition.split(/\r\n|\r|\n/);
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const text = lines[i]!.replace(/[ \t]+$/, "");
    if (text.trim() === "") {
      block = null;
      continue;
    }
    const description = DESCRIPTION.exec(text.trim());
    if (description) {
      // A new description after a block's patterns starts the next block even without the blank line.
      const b: Block =
        block && !block.method && block.patterns.length === 0 && block.description === null ? block : start(n);
      b.description = description[1]!.trim();
      continue;
    }
    if (text.trimStart().startsWith("//")) continue;

    const annotation = ANNOTATION.exec(text.trim());
    if (annotation) {
      const b = block ?? start(n);
      const [, inside, rest] = annotation as unknown as [string, string, string];
      const scoped = /^(section|unless)\s*:\s*(.*)$/i.exec(inside);
      if (scoped) {
        const kind = scoped[1]!.toLowerCase() as "section" | "unless";
        const pattern = scoped[2]!;
        if (b.patterns.length > 0) problem(n, `#[${kind}: ...] must come before the block's patterns`);
        else if (pattern === "") problem(n, `#[${kind}: ...] needs a regular expression`);
        else if (rest.trim() !== "")
          problem(n, `unexpected text after #[${kind}: ...]; put the regular expression inside the brackets`);
        else (kind === "section" ? b.path : b.unless).push({ text: pattern, line: n });
        continue;
      }
      if (!isRuleMethod(inside)) {
        problem(n, `unknown method "${inside}"${suggestion(inside)}`);
        continue;
      }
      if (b.method) {
        problem(
          n,
          `a second method in one block (the first is on line ${b.methodLine}); separate blocks with a blank line`,
        );
        continue;
      }
      b.method = inside;
      b.methodLine = n;
      if (rest.trim() !== "") b.patterns.push({ text: rest.trim(), line: n });
      continue;
    }

    if (!block || !block.method) {
      const b = block ?? start(n);
      if (!b.broken) problem(n, `pattern line before a #[method] line: "${clip(text.trim())}"`);
      continue;
    }
    block.patterns.push({ text, line: n });
  }

  const rules: PolicyRule[] = [];
  for (const b of blocks) {
    if (b.broken) continue;
    if (!b.method) {
      problems.push({ line: b.line, message: "block without a #[method] line" });
      continue;
    }
    const spec = METHODS[b.method];
    if (b.patterns.length === 0) {
      problems.push({
        line: b.methodLine,
        message: `block without patterns: #[${b.method}] needs at least one line after it`,
      });
      continue;
    }
    if (spec.single && b.patterns.length > 1) {
      problems.push({
        line: b.patterns[1]!.line,
        message: `${b.method} takes exactly one pattern, found ${b.patterns.length}; use an _from_array method for several`,
      });
      continue;
    }
    if (b.unless.length > 0 && b.path.length === 0) {
      problems.push({
        line: b.unless[0]!.line,
        message: "#[unless: ...] without a #[section: ...] line in the same block",
      });
      continue;
    }
    const rule: PolicyRule = {
      index: rules.length,
      line: b.line,
      description: b.description || `${b.method}: ${b.patterns[0]!.text.trim()}`,
      method: b.method,
      patterns:
        spec.kind === "string" || spec.kind === "wildcard"
          ? b.patterns.map((p) => p.text.trim())
          : b.patterns.map((p) => p.text),
    };
    if (b.path.length > 0) rule.section = { path: b.path.map((p) => p.text), unless: b.unless.map((p) => p.text) };

    const written = [...b.patterns, ...b.path, ...b.unless];
    const textProblems = written.flatMap((p) => {
      const why = patternTextProblem(p.text);
      return why ? [{ line: p.line, message: `pattern ${why}` }] : [];
    });
    if (textProblems.length > 0) {
      problems.push(...textProblems);
      continue;
    }
    const compiled = compileRule(rule);
    if ("errors" in compiled) {
      // errors index `written` in the same order: patterns, then section path, then unless
      for (const e of compiled.errors) problems.push({ line: written[e.at]!.line, message: e.message });
      continue;
    }
    rules.push(rule);
    remember(rule, compiled.rule);
  }
  if (blocks.length === 0)
    problems.push({
      line: 1,
      message: "the definition has no rules: write a // Description: line, a #[method] line and its patterns",
    });
  problems.sort((a, b) => a.line - b.line);
  return { policy: { rules }, problems };
}

const clip = (s: string) => (s.length > 60 ? `${s.slice(0, 57)}...` : s);

/** ", did you mean X?" for a method name one or two edits away from a real one. */
function suggestion(name: string): string {
  let best: string | null = null;
  let bestDistance = 3;
  for (const m of Object.keys(METHODS)) {
    const d = distance(name.toLowerCase(), m);
    if (d < bestDistance) [best, bestDistance] = [m, d];
  }
  return best ? `; did you mean "${best}"?` : "";
}

function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}
