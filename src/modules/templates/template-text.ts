/**
 * What a connection template does to text, in one place so the collector that applies it and the tests that
 * check the built-in templates against recorded sessions agree. Pure: no I/O. Text is expected with "\n" line
 * endings (the collector normalises "\r\n" before filtering).
 */
import {
  compileShippedAlternatives,
  compileUserAlternatives,
  type Pattern,
  type PatternTest,
} from "../../kernel/patterns/user-pattern.ts";
import type { ConnectionTemplate, LineFilter } from "./template-schema.ts";
import { compileTemplatePattern, isShippedPattern } from "./template-patterns.ts";
import { utf8Length } from "../../kernel/text-bytes.ts";
import { maskGenericSecrets } from "./secret-grammar.ts";

// CSI (ESC [ ... final byte), OSC (ESC ] ... BEL or ESC \), charset selection (ESC ( B), then any other
// two-byte escape (ESC =, ESC >, ESC M ...).
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[@-Z\\-_=>]/g;

export const stripAnsi = (text: string): string => text.replace(ANSI, "");

/** The last line received so far, as prompt, pager and login patterns see it. */
export function promptTail(received: string): string {
  const text = stripAnsi(received);
  return text.slice(text.lastIndexOf("\n") + 1);
}

type LineTest = PatternTest;
type CompiledFilter = { line: LineTest } | { from: LineTest; to: LineTest };

/** A run's shipped patterns (JavaScript's engine) and its users' (RE2), each engine's combined: any may match. */
const eitherOf = (tests: LineTest[]): LineTest =>
  tests.length === 1 ? tests[0]! : { test: (l) => tests.some((t) => t.test(l)) };

/**
 * The filters as patterns, each run of line filters as one alternation per engine: a line is tested once per run
 * instead of once per filter (for the built-in Cisco IOS template, 0.4 ms less per 100 KB configuration). The
 * first filter that matches decides, as in the list, since runs keep their place between the block filters.
 * Shipped patterns may refer to their own groups (\1), so those stay out of a combined alternation.
 */
function compileFilters(filters: readonly LineFilter[]): CompiledFilter[] {
  const compiled: CompiledFilter[] = [];
  let run: string[] = [];
  const endRun = () => {
    if (!run.length) return;
    const shipped = run.filter((f) => isShippedPattern(f, "line"));
    const users = run.filter((f) => !isShippedPattern(f, "line"));
    const parts = [
      ...shippedAlternatives(shipped),
      ...(users.length ? [compileUserAlternatives(users.map((source) => ({ source })))] : []),
    ];
    compiled.push({ line: eitherOf(parts) });
    run = [];
  };
  for (const f of filters) {
    if (typeof f === "string") {
      run.push(f);
      continue;
    }
    endRun();
    compiled.push({ from: compileTemplatePattern(f.from, "line"), to: compileTemplatePattern(f.to, "line") });
  }
  endRun();
  return compiled;
}

// A pattern whose groups another pattern's could renumber or collide with stays a regex of its own.
const REFERS_TO_GROUPS = /\\[1-9]|\\k<|\(\?</;

function shippedAlternatives(sources: string[]): Pattern[] {
  const alone = sources.filter((f) => REFERS_TO_GROUPS.test(f)).map((f) => compileTemplatePattern(f, "line"));
  const combinable = sources.filter((f) => !REFERS_TO_GROUPS.test(f));
  return [...(combinable.length ? [compileShippedAlternatives(combinable)] : []), ...alone];
}

// By list: the collector applies the same template's lists to every download (parsed once: collector/template-cache.ts).
const compiledLists = new WeakMap<readonly LineFilter[], CompiledFilter[]>();

/**
 * Removes the lines the filters select. A block runs from a line matching `from` through the first line,
 * the same one or a later one, matching `to` (or to the end of the text when none does).
 */
export function removeLines(text: string, filters: readonly LineFilter[]): string {
  if (!filters.length) return text;
  let compiled = compiledLists.get(filters);
  if (!compiled) compiledLists.set(filters, (compiled = compileFilters(filters)));
  // The kept lines as runs of the text (a run's lines with their line breaks): no array of every line, and the
  // text itself when nothing is dropped. Splitting 100 KB into lines and joining them again cost the store
  // thread 0.1-0.2 ms a pass, and a download takes two (dropped lines, volatile lines).
  const runs: string[] = [];
  let runStart = -1;
  let dropped = false;
  let closing: LineTest | null = null;
  for (let start = 0; ; ) {
    const eol = text.indexOf("\n", start);
    const end = eol === -1 ? text.length : eol;
    const l = text.slice(start, end);
    let drop = false;
    if (closing) {
      if (closing.test(l)) closing = null;
      drop = true;
    } else {
      for (const f of compiled) {
        if ("line" in f ? f.line.test(l) : f.from.test(l)) {
          drop = true;
          if ("to" in f && !f.to.test(l)) closing = f.to;
          break;
        }
      }
    }
    if (!drop) {
      if (runStart < 0) runStart = start;
    } else {
      dropped = true;
      if (runStart >= 0) runs.push(text.slice(runStart, start - 1));
      runStart = -1;
    }
    if (eol === -1) {
      if (runStart >= 0) runs.push(text.slice(runStart));
      break;
    }
    start = eol + 1;
  }
  return dropped ? runs.join("\n") : text;
}

// By list, as the filters are.
const compiledSecrets = new WeakMap<ConnectionTemplate["secrets"], { pattern: Pattern; replace: string }[]>();

/** Replaces secrets over the whole text (^ and $ match at line ends), one rule after another. */
export function removeSecrets(text: string, secrets: ConnectionTemplate["secrets"]): string {
  let compiled = compiledSecrets.get(secrets);
  if (!compiled)
    compiledSecrets.set(
      secrets,
      (compiled = secrets.map((s) => ({ pattern: compileTemplatePattern(s.pattern, "text"), replace: s.replace }))),
    );
  return compiled.reduce((t, rule) => rule.pattern.replaceAll(t, rule.replace), text);
}

/**
 * Both masking layers: the template's own rules, then the generic one (secret-grammar.ts), which catches what no
 * rule names. Every text netkeep keeps from a device passes this: stored outputs, push transcripts, job messages.
 */
export const maskSecrets = (text: string, secrets: ConnectionTemplate["secrets"]): string =>
  maskGenericSecrets(removeSecrets(text, secrets));

/** What is stored for one command's cleaned output: dropped lines removed, then secrets replaced (both layers). */
export const storedText = (output: string, template: Pick<ConnectionTemplate, "filters" | "secrets">): string =>
  maskSecrets(removeLines(output, template.filters.drop), template.secrets);

/** The view of stored text that decides whether the configuration changed: volatile lines left out. */
export const comparableText = (stored: string, template: Pick<ConnectionTemplate, "filters">): string =>
  removeLines(stored, template.filters.volatile);

/** How many lines of an implausible configuration its failure message shows (stored text: secrets already out). */
const IMPLAUSIBLE_LINES = 5;

/**
 * Why the stored text of a template's configuration command cannot be a real configuration (empty, shorter than
 * `min_bytes`, without `config_marker`), or undefined when it is plausible. A command that printed nothing, or
 * only an error, must not be stored as a successful empty version.
 */
export function implausibleConfiguration(
  stored: string,
  template: Pick<ConnectionTemplate, "config_command" | "min_bytes" | "config_marker">,
): string | undefined {
  const command = `'${template.config_command}'`;
  if (!stored.trim()) return `${command} returned no configuration text`;
  const shown = () =>
    `; it printed: ${stored
      .split("\n")
      .filter((l) => l.trim())
      .slice(0, IMPLAUSIBLE_LINES)
      .join(" | ")}`;
  const bytes = utf8Length(stored);
  if (template.min_bytes !== undefined && bytes < template.min_bytes) {
    return `${command} returned ${bytes} bytes, fewer than the template's min_bytes (${template.min_bytes})${shown()}`;
  }
  if (template.config_marker !== undefined && !compileTemplatePattern(template.config_marker, "text").test(stored)) {
    return `${command} returned text without the template's config_marker /${template.config_marker}/${shown()}`;
  }
  return undefined;
}
