/**
 * Configurations, changes, download-now and health as rConfig's v1 ConfigsController, ConfigActionsController,
 * v2 ConfigChangesController and SystemHealthController answer them, beside netkeep's fields.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { and, eq, inArray } from "drizzle-orm";
import { deviceScopeCondition } from "../../../platform/auth/scope.ts";
import { configs, devices, JOB_OUTCOMES } from "../../../db/schema/index.ts";
import { ApiError } from "../../../platform/http/errors.ts";
import type { AppEnv } from "../../../platform/http/env.ts";
import { MAX_PER_PAGE } from "../../../platform/http/list.ts";
import { readBlobs } from "../../../modules/configs/index.ts";
import { configFileName } from "../../../modules/configs/index.ts";
import { replaceQuery, succeeded, type CompatHook, type Responses } from "./hook.ts";
import { extendData, extendTop, SuccessFields } from "./envelope.ts";

// ---- download-now --------------------------------------------------------------------------------------------

const downloadNow: CompatHook = {
  response: async (_c, body) => {
    const job = body.data as { device_id: number };
    return { body: succeeded(body, `Download started for device ${job.device_id}`), status: 200 };
  },
  document: (responses) => {
    const { 202: _queued, ...rest } = extendTop(responses) as Record<string, unknown>;
    const ok = rest[200] as { description: string };
    return {
      ...rest,
      200: {
        ...ok,
        description:
          "The job: queued, running or (with wait) finished; poll status_url (also in Location) until state is finished",
      },
    } as Responses;
  },
  note:
    'It answers 200 in every case, as rConfig does, with rConfig\'s success and message ("Download started for device {id}") beside the job: ' +
    "data.state says whether the job is queued, running or finished, and an unfinished job's status URL is in Location.",
};

// ---- all-by-deviceid ------------------------------------------------------------------------------------------

/**
 * The configuration text one answer carries: a device with hundreds of large versions would otherwise be read
 * and serialised whole into one answer (500 versions of a few MB each is gigabytes), for any caller with
 * configs.read. The first version's text always comes, whatever its size.
 */
export const TEXT_BUDGET_BYTES = 16 * 1024 * 1024;

type ConfigRecord = {
  id: number;
  device_name: string;
  command: string;
  version: number;
  latest: boolean;
  hash: string;
  size: number;
  first_seen_at: string;
  last_seen_at: string;
  download_status: string | null;
};

export const RconfigConfigFields = {
  config_hash: z.string().openapi({ description: "rConfig's name for hash" }),
  config_version: z.number().int().openapi({ description: "rConfig's name for version" }),
  config_filename: z.string().openapi({ description: "The file name GET /configs/{id}/download gives the text" }),
  config_filesize: z.number().int().openapi({ description: "rConfig's name for size (bytes)" }),
  download_status: z.number().int().openapi({
    description:
      "rConfig's status: 1 (a stored version is a successful download). netkeep's outcome is download_outcome",
  }),
  download_outcome: z
    .enum(JOB_OUTCOMES)
    .nullable()
    .openapi({ description: "netkeep's download_status on every other route: the storing job's outcome" }),
  latest_version: z
    .number()
    .int()
    .openapi({ description: "rConfig's latest flag: 1 for the newest version of its command, else 0" }),
  start_time: z.string().openapi({ description: "When a download last got this text (last_seen_at)" }),
  created_at: z.string().openapi({ description: "When this version was first stored (first_seen_at)" }),
  config: z
    .string()
    .nullable()
    .openapi({
      description: `The configuration text, as rConfig's all-by-deviceid includes it; null past the first ${TEXT_BUDGET_BYTES / 1048576} MiB of text in the answer (fetch those versions with GET /configs/{id}/download, or ask for fewer with per_page)`,
    }),
};

/** rConfig's answer (ConfigsController allByDeviceId, statuscount) to a device id it has no configs for. */
export const CONFIGS_NOT_FOUND = "Configs not found for this device ID.";

/**
 * rConfig's 422 for a device that does not exist, or is outside the caller's scope (which must answer the same,
 * so a device's existence does not leak). A device on record without a stored version answers as netkeep's
 * route does (an empty list, a count of 0): netkeep knows it is there.
 */
export async function refuseUnknownDevice(c: Context<AppEnv>, id: number): Promise<void> {
  const [device] = await c.var.services.db
    .select({ id: devices.id })
    .from(devices)
    .where(and(eq(devices.id, id), deviceScopeCondition(c.var.auth.scope)));
  if (!device) throw new ApiError(422, CONFIGS_NOT_FOUND);
}

/** rConfig returns every row, not a page: without page or per_page the answer is one page of up to MAX_PER_PAGE. */
const allRows: CompatHook["request"] = async (c) => {
  const id = c.req.param("device_id");
  if (id !== undefined && /^\d{1,15}$/.test(id)) await refuseUnknownDevice(c, Number(id)); // other text: the validator's 422
  const params = new URL(c.req.url).searchParams;
  if (params.has("page") || params.has("per_page") || params.has("perPage")) return;
  params.set("per_page", String(MAX_PER_PAGE));
  replaceQuery(c, params);
};

const configsByDevice: CompatHook = {
  request: allRows,
  response: async (c, body) => {
    const records = body.data as ConfigRecord[];
    if (c.req.query("fields") !== undefined) return { body: succeeded(body, "Success") };
    const { db } = c.var.services;
    let bytes = 0;
    const withText = new Set(
      records.filter((r, i) => (bytes += r.size) <= TEXT_BUDGET_BYTES || i === 0).map((r) => r.id),
    );
    const rows = withText.size
      ? await db
          .select({ id: configs.id, blobHash: configs.blobHash })
          .from(configs)
          .where(inArray(configs.id, [...withText]))
      : [];
    const hashOf = new Map(rows.map((r) => [r.id, r.blobHash]));
    const texts = await readBlobs(db, [...new Set(rows.map((r) => r.blobHash))]);
    const data = records.map((r) => ({
      ...r,
      config_hash: r.hash,
      config_version: r.version,
      config_filename: configFileName(r.device_name, r.command, r.version),
      config_filesize: r.size,
      download_status: 1,
      download_outcome: r.download_status,
      latest_version: r.latest ? 1 : 0,
      start_time: r.last_seen_at,
      created_at: r.first_seen_at,
      config: withText.has(r.id) ? (texts.get(hashOf.get(r.id) ?? "") ?? "") : null,
    }));
    return { body: succeeded({ ...body, data }, "Success") };
  },
  document: (responses) => extendData(responses, RconfigConfigFields, false, SuccessFields),
  note:
    `A device that does not exist or is outside your scope answers rConfig's 422 "${CONFIGS_NOT_FOUND}". ` +
    "As rConfig's all-by-deviceid: without page or per_page it answers every version in one page (up to 500; links.next names the rest), " +
    `each with rConfig's config_* fields and its text in config (up to ${TEXT_BUDGET_BYTES / 1048576} MiB of text an answer: later versions' config is null). ` +
    "download_status is rConfig's number here; netkeep's outcome is download_outcome.",
};

// ---- config changes ---------------------------------------------------------------------------------------------

export const RconfigChangeFields = {
  current_config_id: z.number().int().openapi({ description: "rConfig's name for config_id" }),
  config_version: z.number().int().openapi({ description: "rConfig's name for version" }),
  config_diff: z.string().openapi({ description: "rConfig's name for diff (here a unified diff, not rConfig's HTML)" }),
  config_change_type: z
    .enum(["added", "changed"])
    .openapi({ description: "added for a device's first version of a command, changed after" }),
  change_trigger: z.string().openapi({ description: "rConfig's name for trigger" }),
};

type ChangeRecord = {
  config_id: number;
  version: number;
  diff: string;
  previous_version: number | null;
  trigger: string;
};

const configChange: CompatHook = {
  response: async (_c, body) => {
    const r = body.data as ChangeRecord;
    const data = {
      ...r,
      current_config_id: r.config_id,
      config_version: r.version,
      config_diff: r.diff,
      config_change_type: r.previous_version === null ? "added" : "changed",
      change_trigger: r.trigger,
    };
    return { body: succeeded({ ...body, data }, "Success") };
  },
  document: (responses) => extendData(responses, RconfigChangeFields, true),
};

// ---- health -----------------------------------------------------------------------------------------------------

export const RconfigHealthCheckFields = {
  label: z.string().openapi({ description: "rConfig's (spatie/laravel-health) label" }),
  notificationMessage: z.string(),
  shortSummary: z.string(),
  endedAt: z.string(),
  meta: z.record(z.string(), z.unknown()),
};

type Health = {
  ran_at: string;
  checks: { name: string; status: string; message: string; value: number | null; unit: string | null }[];
};

const label = (name: string) =>
  name
    .split("_")
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join(" ");

const healthLatest: CompatHook = {
  response: async (_c, body) => {
    const health = body.data as Health;
    const checks = health.checks.map((check) => ({
      ...check,
      label: label(check.name),
      notificationMessage: check.status === "ok" ? "" : check.message,
      shortSummary: check.message,
      endedAt: health.ran_at,
      meta: { value: check.value, unit: check.unit },
    }));
    return { body: succeeded({ ...body, data: { ...health, checks } }, "Success") };
  },
  document: (responses) =>
    extendData(
      responses,
      (health) => ({
        checks: z.array(
          (health.shape.checks as z.ZodArray<z.ZodObject<z.ZodRawShape>>).element.extend(RconfigHealthCheckFields),
        ),
      }),
      true,
    ),
  note: "Each check also carries rConfig's label, notificationMessage, shortSummary, meta and endedAt. rConfig answers the checks as the data list; here they are data.checks (docs/rconfig.md).",
};

export const configHooks: Record<string, CompatHook> = {
  downloadNow,
  listDeviceConfigs: configsByDevice,
  getConfigChange: configChange,
  getConfigChangeByConfig: configChange,
  getHealthLatest: healthLatest,
  getDashboardHealthLatest: healthLatest,
};
