import { inArray } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { nameKey } from "../../db/name-key.ts";
import { templates } from "../../db/schema/index.ts";
import type { FieldErrors } from "../../platform/http/errors.ts";
import { zodToApiError } from "../../platform/http/validation.ts";
import { applyImport, findDevicesByName, type PlannedRow } from "./import-apply.ts";
import type { InventoryModels, InventorySource } from "../templates/index.ts";
import { DeviceInput, type DeviceInputT } from "./schemas.ts";
import type { WriteContext } from "./service.ts";
import { plural } from "../../kernel/words.ts";

/** One device line of an inventory file, in netkeep's terms but not yet checked. */
export type InventoryEntry = {
  line: number;
  name: string;
  /** Empty when the file has no address: the name is then the host to connect to, as both tools do. */
  ip: string;
  model: string;
  enabled: boolean;
  username?: string;
  password?: string;
  enable?: string;
  group?: string;
  notes?: string;
  warnings: string[];
};
export type LineRejection = { line: number; name: string; reason: string };
export type ParsedInventory = { lines: number; entries: InventoryEntry[]; rejected: LineRejection[] };

export const OXIDIZED_KEYS = ["name", "ip", "model", "username", "password", "enable", "group"] as const;
export type OxidizedMap = Partial<Record<(typeof OXIDIZED_KEYS)[number], number>>;
/** The layout Oxidized's documentation shows for router.db: name:ip:model:username:password:enable. */
export const DEFAULT_OXIDIZED_MAP: OxidizedMap = { name: 0, ip: 1, model: 2, username: 3, password: 4, enable: 5 };

/** Comments (#) and blank lines are skipped, as Oxidized and RANCID skip them. */
function deviceLines(text: string): { total: number; lines: { line: number; text: string }[] } {
  const all = text.replace(/\r\n?/g, "\n").split("\n");
  if (all.at(-1) === "") all.pop();
  const lines = all.flatMap((t, i) => (t.trim() === "" || /^\s*#/.test(t) ? [] : [{ line: i + 1, text: t }]));
  return { total: all.length, lines };
}

/**
 * Oxidized's CSV source: each line split on the delimiter, fields picked by the map's positions (from 0).
 * A line with more fields than the map uses is refused rather than guessed at: it usually means a password
 * containing the delimiter, and shifting every field after it would store the wrong secrets.
 */
export function parseOxidized(text: string, options: { map: OxidizedMap; delimiter: string }): ParsedInventory {
  const { map, delimiter } = options;
  const widest = Math.max(...Object.values(map)) + 1;
  const { total, lines } = deviceLines(text);
  const entries: InventoryEntry[] = [];
  const rejected: LineRejection[] = [];
  for (const { line, text: raw } of lines) {
    const fields = raw.split(delimiter);
    const field = (key: keyof OxidizedMap) => (map[key] === undefined ? "" : (fields[map[key]!] ?? ""));
    const name = field("name").trim();
    const missing = (["name", "model"] as const).find((k) => map[k]! >= fields.length);
    if (missing) {
      rejected.push({
        line,
        name,
        reason: `too few fields: the line has ${plural(fields.length, "field")}, but the map puts ${missing} in field ${map[missing]} (counting from 0)`,
      });
      continue;
    }
    if (fields.length > widest) {
      rejected.push({
        line,
        name,
        reason: `too many fields: the line has ${fields.length}, the map uses ${widest} (is there a '${delimiter}' inside a password?)`,
      });
      continue;
    }
    const optional = (key: keyof OxidizedMap) => field(key) || undefined;
    entries.push({
      line,
      name,
      ip: field("ip").trim(),
      model: field("model").trim(),
      enabled: true,
      username: optional("username"),
      password: optional("password"),
      enable: optional("enable"),
      group: field("group").trim() || undefined,
      warnings: [],
    });
  }
  return { lines: total, entries, rejected };
}

/**
 * RANCID's router.db: `name;type;state` (RANCID 3) or `name:type:state` (RANCID 2), each line read with
 * whichever separator it uses; anything after the state is RANCID 3's free-text comment. RANCID collects
 * only devices whose state is `up`: every other state is imported as a disabled device.
 */
export function parseRancid(text: string): ParsedInventory {
  const { total, lines } = deviceLines(text);
  const entries: InventoryEntry[] = [];
  const rejected: LineRejection[] = [];
  for (const { line, text: raw } of lines) {
    const separator = raw.includes(";") ? ";" : ":";
    const fields = raw.split(separator);
    const [name = "", type = "", state = ""] = fields.map((f) => f.trim());
    const comment = fields.slice(3).join(separator).trim();
    if (fields.length < 3) {
      rejected.push({ line, name, reason: `too few fields: RANCID lines are name${separator}type${separator}state` });
      continue;
    }
    const up = state.toLowerCase() === "up";
    const warnings =
      up || state.toLowerCase() === "down"
        ? []
        : [`state '${state}' is not 'up': imported disabled, as RANCID skips it`];
    entries.push({ line, name, ip: "", model: type, enabled: up, notes: comment || undefined, warnings });
  }
  return { lines: total, entries, rejected };
}

export type LineOutcome = {
  line: number;
  name: string;
  outcome: "created" | "skipped" | "rejected";
  reason?: string;
  warnings: string[];
};
export type InventoryReport = {
  lines: number;
  deviceLines: number;
  created: number;
  skipped: number;
  rejected: number;
  outcomes: LineOutcome[];
};

const reasonOf = (errors: FieldErrors) => Object.values(errors).flat().join("; ");
const SOURCE_NAMES: Record<InventorySource, { tool: string; column: string }> = {
  oxidized: { tool: "Oxidized model", column: "model" },
  rancid: { tool: "RANCID device type", column: "type" },
};

/** Built-in templates installed now, by key; a missing one leaves the device without a template. */
async function installedTemplates(db: DbOrTx, keys: string[]): Promise<Map<string, number>> {
  if (!keys.length) return new Map();
  const rows = await db
    .select({ id: templates.id, key: templates.builtinKey })
    .from(templates)
    .where(inArray(templates.builtinKey, keys));
  return new Map(rows.map((r) => [r.key!, r.id]));
}

/**
 * Imports the entries of an inventory file: each becomes a device with the file's credentials as its own
 * (encrypted, never printed), its tool's model mapped to a vendor and template by `models` (the built-in
 * templates' inventory_names: templates' inventoryModels). A name already in netkeep,
 * in any case, is skipped, so running the same file again imports nothing twice. Good lines are written in
 * one transaction; a dry run does the same and rolls it back.
 */
export async function importInventory(
  ctx: WriteContext,
  source: InventorySource,
  parsed: ParsedInventory,
  options: { dryRun: boolean; models: InventoryModels },
): Promise<InventoryReport> {
  const names = SOURCE_NAMES[source];
  const models = options.models[source];
  const existing = await findDevicesByName(ctx.db, { all: true }, parsed.entries.map((e) => e.name).filter(Boolean));
  const families = parsed.entries.map((e) => models.get(e.model.toLowerCase()));
  const installed = await installedTemplates(ctx.db, [...new Set(families.flatMap((f) => (f ? [f.template] : [])))]);

  const outcomes: LineOutcome[] = parsed.rejected.map((r) => ({ ...r, outcome: "rejected", warnings: [] }));
  const planned: { entry: InventoryEntry; row: PlannedRow }[] = [];
  const firstLine = new Map<string, number>();

  parsed.entries.forEach((entry, i) => {
    const family = families[i];
    const reject = (reason: string) =>
      outcomes.push({ line: entry.line, name: entry.name, outcome: "rejected", reason, warnings: [] });
    if (!family) {
      const what = entry.model
        ? `${names.column} '${entry.model}' is not a known ${names.tool}`
        : `${names.column} is empty`;
      return reject(`${what}; known: ${[...models.keys()].sort().join(", ")}`);
    }
    const key = nameKey(entry.name);
    if (key && firstLine.has(key))
      return reject(`device_name '${entry.name}' repeats line ${firstLine.get(key)} of this file`);
    if (key) firstLine.set(key, entry.line);
    if (key && existing.has(key)) {
      outcomes.push({
        line: entry.line,
        name: entry.name,
        outcome: "skipped",
        reason: `'${existing.get(key)!.name}' is already in netkeep`,
        warnings: [],
      });
      return;
    }

    const warnings = [...entry.warnings];
    const templateId = installed.get(family.template);
    if (templateId === undefined)
      warnings.push(`template '${family.template}' is not installed: imported without a connection template`);
    const input = {
      device_name: entry.name,
      device_ip: entry.ip || entry.name,
      device_vendor: family.vendor,
      device_template_id: templateId ?? null, // named but not installed: the warning says "without a connection template", so no default either
      device_cred_id: 0,
      device_username: entry.username,
      device_password: entry.password,
      device_enable_password: entry.enable,
      device_tags: entry.group ? [entry.group] : undefined,
      custom: { [`${source}_${names.column}`]: entry.model },
      notes: entry.notes,
      enabled: entry.enabled,
    };
    const checked = DeviceInput.safeParse(input);
    if (!checked.success) return reject(reasonOf(zodToApiError(checked.error).errors ?? {}));
    planned.push({
      entry: { ...entry, warnings },
      row: { row: entry.line, device_name: entry.name, create: checked.data as DeviceInputT },
    });
  });

  const applied = await applyImport(
    ctx,
    planned.map((p) => p.row),
    options,
  );
  applied.rows.forEach((r, i) => {
    const { entry } = planned[i]!;
    if (r.action === "reject")
      outcomes.push({
        line: r.row,
        name: r.device_name,
        outcome: "rejected",
        reason: reasonOf(r.errors!),
        warnings: [],
      });
    else outcomes.push({ line: r.row, name: r.device_name, outcome: "created", warnings: entry.warnings });
  });

  outcomes.sort((a, b) => a.line - b.line);
  const count = (o: LineOutcome["outcome"]) => outcomes.filter((x) => x.outcome === o).length;
  return {
    lines: parsed.lines,
    deviceLines: parsed.entries.length + parsed.rejected.length,
    created: count("created"),
    skipped: count("skipped"),
    rejected: count("rejected"),
    outcomes,
  };
}
