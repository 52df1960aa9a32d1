/**
 * Devices as rConfig's API writes and reads them (its StoreDeviceRequest and DeviceController): the request's
 * relation lists become netkeep's fields before validation, and each device record gains rConfig's relations
 * (vendor, category, tag, template as lists of {id, <name>}, last_config) beside netkeep's own fields.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { inArray, sql } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client.ts";
import { nameKey } from "../../../db/name-key.ts";
import { categories, configs, tags, templates, vendors } from "../../../db/schema/index.ts";
import { FieldErrorBag } from "../../../platform/http/errors.ts";
import type { AppEnv } from "../../../platform/http/env.ts";
import { jsonObjectBody, replaceJsonBody, succeeded, type CompatHook } from "./hook.ts";
import { deletedAnswer, extendData, PaginatorFields, withPaginator } from "./envelope.ts";
import { rconfigDeviceStatus, withListRewrite } from "./lists.ts";
import { deviceStateCounts, MAX_DEVICE_TAGS, newestBackupAndDownload } from "../../../modules/devices/index.ts";

// ---- requests ----------------------------------------------------------------------------------------------

/** A whole number, or digits standing for one. */
const asId = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isInteger(v)
    ? v
    : typeof v === "string" && /^\d{1,15}$/.test(v)
      ? Number(v)
      : undefined;
/**
 * rConfig sends a relation as [{"id": n}] (its Vue form's objects) or as ids. Text is a name, as in netkeep's own
 * fields (a tag named "2024" stays that tag), so only numbers and {"id": n} are read as ids.
 */
const idOf = (v: unknown): number | undefined =>
  v && typeof v === "object" && "id" in v
    ? asId((v as { id: unknown }).id)
    : typeof v === "number"
      ? asId(v)
      : undefined;
const first = (v: unknown) => (Array.isArray(v) ? v[0] : v);
const truthy = (v: unknown) => v === true || v === 1 || v === "1" || v === "true" || v === "on";

async function namesById(db: DbOrTx, table: typeof vendors | typeof tags, ids: number[]): Promise<Map<number, string>> {
  if (!ids.length) return new Map();
  const rows = await db.select({ id: table.id, name: table.name }).from(table).where(inArray(table.id, ids));
  return new Map(rows.map((r) => [r.id, r.name]));
}

/**
 * Fields rConfig's StoreDeviceRequest (its toDTO) and device form send that netkeep has no use for: the prompts
 * (the template's prompt pattern finds the prompt), rConfig's own bookkeeping, and its form's helpers.
 */
export const RCONFIG_IGNORED_DEVICE_FIELDS = [
  "device_main_prompt",
  "device_enable_prompt",
  "ssh_key_id",
  "device_version",
  "device_added_by",
  "status",
  "last_seen",
  "selectedCategoryArray",
] as const;

/**
 * Rewrites rConfig's device fields into netkeep's, leaving netkeep's own untouched: device_vendor and device_tags
 * given by id become names, device_template becomes device_template_id, a category sent as a list its one id,
 * an empty or text port a number. device_main_prompt and device_enable_prompt are dropped: the template's prompt
 * pattern finds the prompt. With device_default_creds_on, the device's own (empty) login fields are dropped so the
 * credential set (device_cred_id, or the settings' default) applies.
 */
export async function normaliseDeviceBody(db: DbOrTx, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const out = { ...body };
  const bag = new FieldErrorBag();

  if (
    Array.isArray(out.device_vendor) ||
    typeof out.device_vendor === "number" ||
    (typeof out.device_vendor === "object" && out.device_vendor !== null)
  ) {
    const ref = first(out.device_vendor);
    const id = idOf(ref);
    const name =
      id === undefined ? (typeof ref === "string" ? ref : undefined) : (await namesById(db, vendors, [id])).get(id);
    if (name === undefined)
      bag.add(
        "device_vendor",
        id === undefined
          ? 'device_vendor must be a vendor name, a vendor id or [{"id": n}]'
          : `device_vendor id ${id} is not an existing vendor`,
      );
    else out.device_vendor = name;
  }

  if (out.device_template !== undefined) {
    if (out.device_template_id === undefined) {
      const ref = first(out.device_template);
      const id = idOf(ref) ?? asId(ref);
      if (ref === undefined || ref === null || ref === "") out.device_template_id = null;
      else if (id === undefined) bag.add("device_template", 'device_template must be a template id or [{"id": n}]');
      else out.device_template_id = id;
    }
    delete out.device_template;
  }

  // A longer list is left as sent, for the validator to refuse with the limit, before any id is looked up.
  if (Array.isArray(out.device_tags) && out.device_tags.length <= MAX_DEVICE_TAGS) {
    const items = out.device_tags as unknown[];
    const ids = items.map(idOf);
    const known = await namesById(
      db,
      tags,
      ids.filter((id): id is number => id !== undefined),
    );
    out.device_tags = items.map((item, i) => {
      const id = ids[i];
      if (id === undefined) {
        if (item && typeof item === "object")
          bag.add("device_tags", `device_tags.${i} must be a tag name, a tag id or {"id": n}`);
        return item; // a name: validated (and created when new) as netkeep's own
      }
      const name = known.get(id);
      if (name === undefined) bag.add("device_tags", `device_tags.${i} id ${id} is not an existing tag`);
      return name ?? "";
    });
  }

  if (Array.isArray(out.device_category_id))
    out.device_category_id =
      idOf(first(out.device_category_id)) ?? asId(first(out.device_category_id)) ?? out.device_category_id;
  else if (asId(out.device_category_id) !== undefined) out.device_category_id = asId(out.device_category_id);
  for (const key of ["device_cred_id", "device_port_override"] as const) {
    if (out[key] === "") out[key] = null;
    else if (asId(out[key]) !== undefined) out[key] = asId(out[key]);
  }

  if (out.device_default_creds_on !== undefined) {
    if (truthy(out.device_default_creds_on)) {
      for (const key of ["device_username", "device_password", "device_enable_password"])
        if (!out[key]) delete out[key];
    } else if (out.device_cred_id === undefined) {
      out.device_cred_id = 0;
    }
    delete out.device_default_creds_on;
  }
  for (const key of RCONFIG_IGNORED_DEVICE_FIELDS) delete out[key];
  bag.throwIfAny();
  return out;
}

const deviceRequest: CompatHook["request"] = async (c) => {
  const body = await jsonObjectBody(c);
  if (body) replaceJsonBody(c, await normaliseDeviceBody(c.var.services.db, body));
};

const IdRef = z.object({ id: z.number().int() });
/** The fields only rConfig's StoreDeviceRequest sends, documented on the body (the request hook rewrites or drops them). */
export const RconfigDeviceInputFields = {
  device_template: z
    .union([z.array(IdRef), z.number().int()])
    .optional()
    .openapi({
      description:
        'rConfig\'s form of device_template_id: [{"id": n}] or an id; device_template_id wins when both are sent',
      example: [{ id: 1 }],
    }),
  device_default_creds_on: z.union([z.boolean(), z.number(), z.string()]).optional().openapi({
    description:
      "rConfig's switch: on, the empty device_username/device_password/device_enable_password are dropped so the credential set applies; off, the device's own login (device_cred_id 0 unless sent)",
    example: false,
  }),
  device_main_prompt: z.string().optional().openapi({
    description: "rConfig's; accepted and ignored: the template's prompt pattern finds the prompt",
    example: "core-rtr-01#",
  }),
  device_enable_prompt: z
    .string()
    .optional()
    .openapi({ description: "rConfig's; accepted and ignored", example: "core-rtr-01>" }),
  ...Object.fromEntries(
    RCONFIG_IGNORED_DEVICE_FIELDS.slice(2).map((key) => [
      key,
      z.unknown().optional().openapi({ description: "rConfig's; accepted and ignored" }),
    ]),
  ),
};

/** The fields rConfig's StoreDeviceRequest sends that netkeep reads differently, documented on the input. */
export const RCONFIG_DEVICE_INPUT_NOTE =
  'rConfig\'s StoreDeviceRequest body is accepted as it is: device_vendor and device_tags also as [{"id": n}] lists or ids, ' +
  "device_category_id as a one-item list, device_port_override as digits, and the rConfig-only fields below. See docs/rconfig.md.";

// ---- responses ---------------------------------------------------------------------------------------------

const relation = <K extends string>(nameField: K, what: string) =>
  z
    .array(z.object({ id: z.number().int(), [nameField]: z.string() } as { id: z.ZodNumber } & Record<K, z.ZodString>))
    .openapi({ description: `rConfig's ${what} relation: a one-item list, empty when there is none` });

export const RconfigDeviceFields = {
  vendor: relation("vendorName", "vendor"),
  category: relation("categoryName", "category"),
  template: relation("templateName", "template"),
  tag: z
    .array(z.object({ id: z.number().int(), tagname: z.string() }))
    .openapi({ description: "rConfig's tag relation" }),
  last_config: z
    .object({
      id: z.number().int(),
      device_id: z.number().int(),
      command: z.string(),
      config_version: z.number().int(),
      download_status: z.number().int().openapi({ description: "1: a stored version is a successful download" }),
      created_at: z.string(),
      updated_at: z.string(),
    })
    .nullable()
    .openapi({ description: "rConfig's lastConfig: the device's newest stored version, null before its first backup" }),
};

type DeviceRecord = {
  id: number;
  device_vendor: string | null;
  device_vendor_id: number | null;
  device_category_id: number | null;
  device_template_id: number | null;
  device_tags: string[];
};

/** Adds rConfig's relations to device records, in one query per relation for the whole page. */
export async function decorateDevices(db: DbOrTx, records: DeviceRecord[]): Promise<unknown[]> {
  if (!records.length) return records;
  const ids = (pick: (r: DeviceRecord) => number | null) => [
    ...new Set(records.map(pick).filter((id): id is number => id !== null)),
  ];
  const tagKeys = [...new Set(records.flatMap((r) => r.device_tags.map(nameKey)))];
  const [categoryRows, templateRows, tagRows, latestRows] = await Promise.all([
    ids((r) => r.device_category_id).length
      ? db
          .select({ id: categories.id, name: categories.name })
          .from(categories)
          .where(
            inArray(
              categories.id,
              ids((r) => r.device_category_id),
            ),
          )
      : [],
    ids((r) => r.device_template_id).length
      ? db
          .select({ id: templates.id, name: templates.name })
          .from(templates)
          .where(
            inArray(
              templates.id,
              ids((r) => r.device_template_id),
            ),
          )
      : [],
    tagKeys.length
      ? db.select({ id: tags.id, key: tags.nameKey }).from(tags).where(inArray(tags.nameKey, tagKeys))
      : [],
    db
      .select()
      .from(configs)
      .where(
        inArray(
          configs.id,
          db
            .select({ id: sql<number>`max(${configs.id})` })
            .from(configs)
            .where(
              inArray(
                configs.deviceId,
                records.map((r) => r.id),
              ),
            )
            .groupBy(configs.deviceId),
        ),
      ),
  ]);
  const categoryNames = new Map(categoryRows.map((r) => [r.id, r.name]));
  const templateNames = new Map(templateRows.map((r) => [r.id, r.name]));
  const tagIds = new Map(tagRows.map((r) => [r.key, r.id]));
  const latest = new Map(latestRows.map((r) => [r.deviceId, r]));
  return records.map((r) => {
    const last = latest.get(r.id);
    return {
      ...r,
      vendor:
        r.device_vendor_id !== null && r.device_vendor !== null
          ? [{ id: r.device_vendor_id, vendorName: r.device_vendor }]
          : [],
      category:
        r.device_category_id !== null && categoryNames.has(r.device_category_id)
          ? [{ id: r.device_category_id, categoryName: categoryNames.get(r.device_category_id)! }]
          : [],
      template:
        r.device_template_id !== null && templateNames.has(r.device_template_id)
          ? [{ id: r.device_template_id, templateName: templateNames.get(r.device_template_id)! }]
          : [],
      tag: r.device_tags.flatMap((name) =>
        tagIds.has(nameKey(name)) ? [{ id: tagIds.get(nameKey(name))!, tagname: name }] : [],
      ),
      last_config: last
        ? {
            id: last.id,
            device_id: last.deviceId,
            command: last.command,
            config_version: last.version,
            download_status: 1,
            created_at: last.firstSeenAt.toISOString(),
            updated_at: last.lastSeenAt.toISOString(),
          }
        : null,
    };
  });
}

const wantsFields = (c: Context) => c.req.query("fields") !== undefined;

/** One device answer ({data: device}): rConfig's relations on the record, and its success and message. */
const oneDevice = (message: string): CompatHook => ({
  response: async (c, body) => ({
    body: succeeded(
      { ...body, data: (await decorateDevices(c.var.services.db, [body.data as DeviceRecord]))[0] },
      message,
    ),
  }),
  document: (responses) => extendData(responses, RconfigDeviceFields, true),
});

/** A page of devices: rConfig's relations on each, and the Laravel paginator's fields at the top. */
const devicePage: CompatHook = {
  response: async (c, body) => ({
    body: withPaginator(c, {
      ...body,
      data: wantsFields(c) ? body.data : await decorateDevices(c.var.services.db, body.data as DeviceRecord[]),
    }),
  }),
  document: (responses) => extendData(responses, { ...RconfigDeviceFields }, false, PaginatorFields),
  note: "Each device also carries rConfig's relations (vendor, category, tag, template, last_config), and the answer the Laravel paginator's total, current_page, per_page, last_page (docs/rconfig.md).",
};

// ---- summary -----------------------------------------------------------------------------------------------

/**
 * rConfig's backup figures over each device's last finished download (not cancelled: a cancelled job was never
 * attempted), as the devices module keeps them: counters and the newest download's end from an index, so they do
 * not grow with the devices or the history (src/modules/devices/state-counts.ts).
 */
async function lastRunFigures(c: Context<AppEnv>) {
  const { db } = c.var.services;
  const scope = c.var.auth.scope;
  const [counts, newest] = await Promise.all([deviceStateCounts(db, scope), newestBackupAndDownload(db, scope)]);
  return {
    total_devices: counts.total,
    backup_success_last_run: counts.lastDownloadGood,
    backup_failed_last_run: counts.downloaded - counts.lastDownloadGood,
    last_run_at: newest.lastDownloadAt?.toISOString() ?? null,
  };
}

export const RconfigSummaryFields = {
  total_devices: z.number().int().openapi({ description: "rConfig's name for total" }),
  backup_success_last_run: z
    .number()
    .int()
    .openapi({ description: "Devices whose last attempted download succeeded (success or unchanged)" }),
  backup_failed_last_run: z
    .number()
    .int()
    .openapi({ description: "Devices whose last attempted download failed (cancelled downloads are left out)" }),
  last_run_at: z.string().nullable().openapi({ description: "When the newest of those downloads finished" }),
};

const deviceSummary: CompatHook = {
  response: async (c, body) => ({
    body: succeeded({ ...body, data: { ...(body.data as object), ...(await lastRunFigures(c)) } }, "Device summary"),
  }),
  document: (responses) => extendData(responses, RconfigSummaryFields, true),
  note: "rConfig's total_devices, backup_success_last_run, backup_failed_last_run, never_backed_up and last_run_at are in data too.",
};

export const deviceHooks: Record<string, CompatHook> = {
  listDevices: withListRewrite(
    devicePage,
    {
      filters: { tag: "device_tag_id", vendor: "device_vendor_id", category: "device_category_id", status: "status" },
      values: { status: rconfigDeviceStatus },
    },
    "rConfig's filters are read too: filter[q] (search), filter[tag], filter[vendor], filter[category] (ids) and filter[status] (0, 1, 2, 100); see docs/rconfig.md.",
  ),
  searchDevices: devicePage,
  getDevice: oneDevice("Success"),
  createDevice: {
    ...oneDevice("Device created successfully!"),
    request: deviceRequest,
    requestFields: RconfigDeviceInputFields,
    note: RCONFIG_DEVICE_INPUT_NOTE,
  },
  replaceDevice: {
    ...oneDevice("Device edited successfully!"),
    request: deviceRequest,
    requestFields: RconfigDeviceInputFields,
    note: RCONFIG_DEVICE_INPUT_NOTE,
  },
  updateDevice: {
    ...oneDevice("Device edited successfully!"),
    request: deviceRequest,
    requestFields: RconfigDeviceInputFields,
    note: RCONFIG_DEVICE_INPUT_NOTE,
  },
  enableDevice: oneDevice("Device enabled"),
  disableDevice: oneDevice("Device disabled"),
  deviceSummary,
  deleteDevice: deletedAnswer("Device"),
};
