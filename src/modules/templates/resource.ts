import { z } from "@hono/zod-openapi";
import { inArray, sql } from "drizzle-orm";
import { deviceProfiles, devices, templates } from "../../db/schema/index.ts";
import { type DeviceUse, deviceCounts, refuseDeleteWhileDevicesUse } from "../../platform/http/device-usage.ts";
import { containsText } from "../../platform/http/list.ts";
import { checkUniqueName, defineResource, nameFilter, type WriteCtx } from "../../platform/http/resource.ts";
import { builtinFilter, idFilter } from "../../platform/http/filters.ts";
import { parseTemplate } from "./template-schema.ts";
import { plural } from "../../kernel/words.ts";
import { freeText, singleLine } from "../../platform/http/text.ts";

export const Template = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    code: z
      .string()
      .openapi({ description: "The template as YAML (the format: docs/collector.md, Connection templates)" }),
    builtin: z
      .boolean()
      .openapi({ description: "Shipped with netkeep and updated by upgrades: read-only, copy it to customise" }),
    vendor: z.string().nullable().openapi({ description: "The vendor the template's YAML names" }),
    devices_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Template");

const EXAMPLE_CODE = [
  "vendor: Cisco",
  "description: Cisco IOS",
  "prompt: '(?:^|\\r)[\\w.@()/:-]+[#>] ?$'",
  "setup:",
  "  - terminal length 0",
  "commands:",
  "  - show running-config",
  "  - show version",
  "teardown:",
  "  - exit",
  "",
].join("\n");

const TemplateInput = z
  .object({
    name: singleLine(z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters")).openapi({
      example: "cisco-ios-lab",
    }),
    description: freeText(z.string().max(1000, "must be at most 1000 characters")).optional().openapi({
      description: "Left out on create or PUT: the YAML's description",
      example: "IOS with the lab's extra commands",
    }),
    code: z.string().min(1, "must not be empty").max(200_000, "must be at most 200000 characters").openapi({
      description: "The template as YAML; checked on every write (a problem is a 422 naming its line and key)",
      example: EXAMPLE_CODE,
    }),
  })
  .openapi("TemplateInput");

type TemplateRow = typeof templates.$inferSelect;

/** The vendor named in stored YAML (stored templates always parse: every write checks them). */
const vendorOf = (code: string): string | null => {
  const parsed = parseTemplate(code);
  return parsed.ok ? (parsed.template.vendor ?? null) : null;
};

/** How devices use templates (shared counting: platform/http/device-usage.ts). */
const TEMPLATE_USE: DeviceUse = { columns: [devices.templateId] };

/** Problems in the YAML go under `code` or `code.<key path>`, each naming its line. */
export function checkTemplateCode(ctx: Pick<WriteCtx, "bag">, code: string): { description?: string } | undefined {
  const parsed = parseTemplate(code);
  if (parsed.ok) return { description: parsed.template.description };
  for (const e of parsed.errors) ctx.bag.add(e.key ? `code.${e.key}` : "code", `code: ${e.message}`);
  return undefined;
}

export const templatesResource = defineResource({
  // 200,000 characters of YAML, escaped in JSON, can pass 1 MiB.
  bodyLimit: 2 * 1024 * 1024,
  tag: "Templates",
  path: "/templates",
  singular: "template",
  plural: "templates",
  resource: "templates",
  table: templates,
  output: Template,
  input: TemplateInput,
  listSpec: {
    fields: Object.keys(Template.shape),
    filters: {
      id: idFilter(templates.id, "id", "Template id"),
      name: nameFilter(templates.nameKey),
      builtin: builtinFilter(templates.builtinKey),
    },
    sorts: {
      id: templates.id,
      name: sql`lower(${templates.name})`,
      created_at: templates.createdAt,
      updated_at: templates.updatedAt,
    },
    defaultSort: "name",
    idColumn: templates.id,
    search: {
      describe: "Substring of the name, description or YAML text",
      build: (term) =>
        sql`(${containsText(templates.name, term)} or ${containsText(templates.description, term)} or ${containsText(templates.code, term)})`,
    },
  },
  reaches: async (_db, ids) => inArray(devices.templateId, ids),
  async serialize(db, rows, scope) {
    const counts = await deviceCounts(
      db,
      TEMPLATE_USE,
      rows.map((r) => r.id),
      scope,
    );
    return (rows as TemplateRow[]).map((r) => ({
      id: r.id,
      name: r.name,
      description: r.description,
      code: r.code,
      builtin: r.builtinKey !== null,
      vendor: vendorOf(r.code),
      devices_count: counts.get(r.id) ?? 0,
      created_at: r.createdAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
    }));
  },
  async toValues(input, existing, ctx) {
    const nameKey = await checkUniqueName(
      ctx,
      templates.nameKey,
      templates.id,
      input.name,
      existing?.id ?? null,
      "name",
    );
    const values: Partial<typeof templates.$inferInsert> = {};
    if (input.name !== undefined) Object.assign(values, { name: input.name, nameKey });
    if (input.code !== undefined) {
      const checked = checkTemplateCode(ctx, input.code);
      values.code = input.code;
      if (input.description === undefined && ctx.mode !== "patch") values.description = checked?.description ?? "";
    }
    if (input.description !== undefined) values.description = input.description;
    return values;
  },
  readOnlyReason: (row) =>
    row.builtinKey
      ? `Built-in template '${row.name}' is read-only; copy it with POST /api/v1/templates/${row.id}/copy and change the copy`
      : undefined,
  async beforeDelete(rows, ctx) {
    const ids = rows.map((r) => r.id);
    await refuseDeleteWhileDevicesUse(
      ctx.tx,
      TEMPLATE_USE,
      ids,
      "Template",
      () => "move them to another template first",
    );
    const profiles = await ctx.tx
      .update(deviceProfiles)
      .set({ templateId: null })
      .where(inArray(deviceProfiles.templateId, ids))
      .returning({ id: deviceProfiles.id });
    return profiles.length ? `cleared from ${plural(profiles.length, "device profile")}` : undefined;
  },
  descriptions: {
    create:
      'The code is checked against the template format: a YAML syntax error, an unknown key, a wrong type or a regular expression that does not compile in RE2 (docs/patterns.md: no lookaround or backreferences, at most 1,000 characters, no control characters) is a 422 whose errors name the line and key (`code.prompt`: "code: line 4: key `prompt`: is not a valid regular expression: ..."). A left-out description is taken from the YAML.',
    update:
      "Built-in templates are read-only (403): copy one with POST /templates/{id}/copy. The code is checked as on create.",
    delete:
      "Refused with 409 while any device uses the template, and with 403 for a built-in one. Device profiles that name it lose their template default; the answer says how many.",
  },
});
