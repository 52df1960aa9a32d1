import { z } from "@hono/zod-openapi";
import { JOB_OUTCOMES, JOB_TRIGGERS } from "../../db/schema/index.ts";

export const Config = z
  .object({
    id: z.number().int(),
    device_id: z.number().int(),
    device_name: z.string(),
    command: z.string().openapi({ example: "show running-config" }),
    version: z.number().int().openapi({ description: "1, 2, ... per device and command", example: 3 }),
    latest: z.boolean().openapi({ description: "Whether this is the newest version of its device and command" }),
    first_seen_at: z.string().openapi({ description: "When a download first got this text (the version's creation)" }),
    last_seen_at: z.string().openapi({ description: "When a download last got it (volatile lines aside)" }),
    seen_count: z.number().int().openapi({ description: "Downloads that got this version" }),
    lines: z.number().int(),
    size: z.number().int().openapi({ description: "Bytes of text" }),
    hash: z.string().openapi({ description: "SHA-256 of the text, hex" }),
    secrets_changed: z.boolean().openapi({
      description:
        "Secret values masked in the text differ from the version before (a rotated key): the values themselves are never stored",
    }),
    job_id: z.number().int().nullable().openapi({ description: "The download job that stored this version" }),
    trigger: z.enum(JOB_TRIGGERS).nullable().openapi({ description: "What started that download" }),
    download_status: z
      .enum(JOB_OUTCOMES)
      .nullable()
      .openapi({ description: "That job's outcome; null once the job record is gone" }),
    download_duration_ms: z.number().int().nullable().openapi({ description: "How long that download took" }),
  })
  .openapi("Config");

export type ConfigOut = z.infer<typeof Config>;
export const CONFIG_FIELDS = Object.keys(Config.shape);

const ChangeFields = {
  id: z.number().int(),
  device_id: z.number().int(),
  device_name: z.string(),
  command: z.string(),
  config_id: z.number().int().openapi({ description: "The version this change produced" }),
  version: z.number().int(),
  previous_config_id: z
    .number()
    .int()
    .nullable()
    .openapi({ description: "The version it replaced; null for a first version or once that version is deleted" }),
  previous_version: z.number().int().nullable(),
  lines_added: z.number().int(),
  lines_removed: z.number().int(),
  secrets_changed: z.boolean().openapi({
    description:
      "Secret values masked in the text changed (a rotated key); the diff says so on its first line, the values are never stored",
  }),
  trigger: z.enum(JOB_TRIGGERS).openapi({
    description:
      'What started the download: schedule, download_now, api, cli, snippet (the downloads around a snippet push), event, or syslog (the device\'s "configuration changed" message)',
  }),
  changed_by: z.string().nullable().openapi({
    description:
      'Who changed the configuration, when the device\'s syslog message said so: "changed by <user> from <source> via <line>"; null: not known',
  }),
  created_at: z.string(),
};

export const ConfigChange = z.object(ChangeFields).openapi("ConfigChange");
export const ConfigChangeWithDiff = z
  .object({
    ...ChangeFields,
    diff: z.string().openapi({ description: "Unified diff against the previous version (3 lines of context)" }),
  })
  .openapi("ConfigChangeWithDiff");
export type ConfigChangeOut = z.infer<typeof ConfigChangeWithDiff>;
export const CHANGE_FIELDS = Object.keys(ChangeFields);

const DiffLine = z.object({
  kind: z.enum(["context", "removed", "added"]),
  old_line: z.number().int().nullable().openapi({ description: "Line number in the old text; null for an added line" }),
  new_line: z
    .number()
    .int()
    .nullable()
    .openapi({ description: "Line number in the new text; null for a removed line" }),
  text: z.string(),
  old_text: z
    .string()
    .optional()
    .openapi({ description: "A context line equal only under ignore_whitespace or ignore_case: the old text's form" }),
});

const DiffSide = z.object({
  id: z.number().int(),
  device_id: z.number().int(),
  device_name: z.string(),
  command: z.string(),
  version: z.number().int(),
});

export const ConfigDiff = z
  .object({
    from: DiffSide,
    to: DiffSide,
    identical: z.boolean().openapi({ description: "No difference under the options given" }),
    lines_added: z.number().int(),
    lines_removed: z.number().int(),
    options: z.object({
      context: z.number().int(),
      ignore_whitespace: z.boolean(),
      ignore_case: z.boolean(),
      exclusions: z.boolean(),
    }),
    hunks: z.array(
      z.object({
        old_start: z.number().int(),
        old_lines: z.number().int(),
        new_start: z.number().int(),
        new_lines: z.number().int(),
        lines: z.array(DiffLine),
      }),
    ),
  })
  .openapi("ConfigDiff");
