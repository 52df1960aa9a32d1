/**
 * How a connection template's patterns are compiled. Templates are edited through the API, so their patterns
 * are users' and run in RE2 (src/kernel/patterns/user-pattern.ts), with one exception: a pattern netkeep itself ships
 * in a built-in template (collector/templates/*.yaml, reviewed and tested against recorded sessions), used in
 * the same role, runs in JavaScript's engine. Those patterns use lookahead, which RE2 lacks, and they run on
 * every download, where RE2 cost about 25 ms of CPU per 100 KB configuration against JavaScript's 0.6 ms for
 * the Cisco IOS template's filters and secrets. A copy of a built-in keeps them; a pattern a user adds or
 * changes is theirs and runs in RE2.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { compileShippedPattern, compileUserPattern, type Pattern } from "../../kernel/patterns/user-pattern.ts";

/**
 * Where a pattern runs, which decides its flags: `line` patterns (prompts, pager, login and enable prompts, line
 * filters, push errors and prompts) are tested against one line; `text` patterns (secrets) run over a whole output with ^ and $ at line ends.
 */
export type TemplatePatternRole = "line" | "text";

/** The built-in templates, the same files the launcher seeds (src/runtime/builtin-templates.ts). */
const SHIPPED_DIR = fileURLToPath(new URL("../../../collector/templates/", import.meta.url));

/** Defaults the schema fills in for login prompts: ours too. */
export const DEFAULT_USERNAME_PROMPT = "(?:[Uu]ser(?:name)?|[Ll]ogin) ?: ?$";
export const DEFAULT_PASSWORD_PROMPT = "[Pp]ass(?:word|code) ?: ?$";

/** The keys of a built-in template that hold patterns; the launcher refuses a built-in the schema refuses. */
type ShippedYaml = {
  prompt?: unknown;
  pager?: { pattern?: unknown };
  login?: { username_prompt?: unknown; password_prompt?: unknown };
  enable?: { password_prompt?: unknown; prompt?: unknown };
  filters?: {
    drop?: (string | { from?: unknown; to?: unknown })[];
    volatile?: (string | { from?: unknown; to?: unknown })[];
  };
  secrets?: { pattern?: unknown }[];
  config_marker?: unknown;
  detect?: {
    banner?: unknown;
    prompt?: unknown;
    version?: unknown;
    netconf_capability?: unknown;
    sys_descr?: unknown;
    sys_descr_model?: unknown;
    sys_descr_os_version?: unknown;
    model?: unknown;
    os_version?: unknown;
  };
  push?: { errors?: unknown[]; prompts?: { pattern?: unknown }[] };
  syslog?: { changed?: { pattern?: unknown }[] };
};

let shipped: Record<TemplatePatternRole, Set<string>> | undefined;

/** The shipped patterns by role, read from the YAML as written (not through the schema, which asks this module). */
function shippedPatterns(): Record<TemplatePatternRole, Set<string>> {
  if (shipped) return shipped;
  const line = new Set([DEFAULT_USERNAME_PROMPT, DEFAULT_PASSWORD_PROMPT]);
  const text = new Set<string>();
  const add = (set: Set<string>, value: unknown) => typeof value === "string" && set.add(value);
  for (const file of readdirSync(SHIPPED_DIR).filter((f) => f.endsWith(".yaml"))) {
    const t = (parse(readFileSync(join(SHIPPED_DIR, file), "utf8")) ?? {}) as ShippedYaml;
    add(line, t.prompt);
    add(line, t.pager?.pattern);
    add(line, t.login?.username_prompt);
    add(line, t.login?.password_prompt);
    add(line, t.enable?.password_prompt);
    add(line, t.enable?.prompt);
    for (const f of [...(t.filters?.drop ?? []), ...(t.filters?.volatile ?? [])]) {
      if (typeof f === "string") add(line, f);
      else if (f) for (const p of [f.from, f.to]) add(line, p);
    }
    for (const s of t.secrets ?? []) add(text, s?.pattern);
    add(text, t.config_marker);
    add(line, t.detect?.prompt);
    for (const p of [
      t.detect?.banner,
      t.detect?.version,
      t.detect?.netconf_capability,
      t.detect?.sys_descr,
      t.detect?.sys_descr_model,
      t.detect?.sys_descr_os_version,
      t.detect?.model,
      t.detect?.os_version,
    ])
      add(text, p);
    for (const e of t.push?.errors ?? []) add(line, e);
    for (const p of t.push?.prompts ?? []) add(line, p?.pattern);
    for (const c of t.syslog?.changed ?? []) add(line, c?.pattern);
  }
  return (shipped = { line, text });
}

/** Compiles a template's pattern for its role; throws PatternError (src/kernel/patterns) when it cannot be used. */
export function compileTemplatePattern(source: string, role: TemplatePatternRole): Pattern {
  const options = { multiline: role === "text" };
  return shippedPatterns()[role].has(source)
    ? compileShippedPattern(source, options)
    : compileUserPattern(source, options);
}

/** Whether a pattern is one netkeep ships for that role, so runs in JavaScript's engine. */
export const isShippedPattern = (source: string, role: TemplatePatternRole): boolean =>
  shippedPatterns()[role].has(source);
