import { z } from "@hono/zod-openapi";

/**
 * The device an event is about, as it was when the event happened: receivers need no second request to know
 * which device, and a webhook's device filter (tags, categories) still applies after the device is deleted.
 */
export const DeviceRef = z
  .object({
    id: z.number().int(),
    name: z.string(),
    ip: z.string(),
    category_id: z.number().int().nullable(),
    tag_ids: z.array(z.number().int()),
  })
  .openapi("EventDevice");
export type DeviceRef = z.infer<typeof DeviceRef>;

const device = { device: DeviceRef };
const id = (what: string) => z.number().int().openapi({ description: what });

/**
 * Every event the service emits: its type, what it means, and its payload. One list, so the OpenAPI document,
 * docs/events.md and every consumer read the same thing; recordEvent checks each payload against it. A payload
 * never holds a secret (no password, key, community, token value or configuration text).
 */
export const EVENT_CATALOGUE = {
  "device.created": {
    describe: "A device was added (API, CLI, import).",
    payload: z.object(device),
  },
  "device.updated": {
    describe:
      "A device's fields changed (write-only fields are named in `changed`, never their values); enabling and disabling are updates too.",
    payload: z.object({
      ...device,
      changed: z.array(z.string()).openapi({ description: "API field names that changed" }),
    }),
  },
  "device.deleted": {
    describe: "A device was deleted, with its configurations.",
    payload: z.object(device),
  },
  "config.changed": {
    describe: "A download stored a new version of a command's output (a first version too: old_version_id null).",
    payload: z.object({
      ...device,
      command: z.string(),
      old_version_id: id("The configuration version before (null for the first)").nullable(),
      new_version_id: id("The new configuration version"),
      lines_added: z.number().int(),
      lines_removed: z.number().int(),
      secrets_changed: z.boolean().openapi({
        description:
          "Secret values masked in the text changed (a rotated key); with 0 lines added and removed, that is the whole change",
      }),
      job_id: id("The download job (null: stored another way, e.g. an upload)").nullable(),
      changed_by: z.string().nullable().openapi({
        description:
          'Who changed it, when the device\'s syslog message said so: "changed by <user> from <source> via <line>"; null: not known',
      }),
    }),
  },
  "backup.failed": {
    describe: "A download failed for good (every retry spent).",
    payload: z.object({
      ...device,
      job_id: id("The download job"),
      outcome: z.string().openapi({ description: "auth_failed, unreachable, timeout, prompt_not_found, error, ..." }),
      reason: z.string(),
    }),
  },
  "backup.recovered": {
    describe: "A download succeeded after the device's previous download had failed.",
    payload: z.object({
      ...device,
      job_id: id("The download job"),
      previous_job_id: id("The failed download before it"),
    }),
  },
  "device.credentials_discovered": {
    describe:
      "Credential discovery found the set that logs in to a device set to discover its credentials (its set stopped working, or it had none); the device now uses it.",
    payload: z.object({
      ...device,
      credential_id: id("The credential set that logs in now"),
      credential_name: z.string(),
      previous_credential_id: id("The set the device had before (null: none)").nullable(),
    }),
  },
  "host_key.changed": {
    describe:
      "A device presented an SSH host key other than the pinned one; its downloads stop until the key is reset.",
    payload: z.object({ ...device, job_id: id("The download job"), reason: z.string() }),
  },
  "task.run.finished": {
    describe: "Every job of a task run finished.",
    payload: z.object({
      task_id: z.number().int(),
      task_name: z.string(),
      run_id: z.number().int(),
      notify_on_failure: z
        .boolean()
        .openapi({ description: "The task's notify_on_failure: whether its failures are to be mailed" }),
      summary: z.object({
        total: z.number().int(),
        succeeded: z.number().int(),
        unchanged: z.number().int(),
        failed: z.number().int(),
        skipped: z.number().int(),
      }),
    }),
  },
  "compliance.failed": {
    describe: "A device's configuration stopped passing a policy (or failed its first check).",
    payload: z.object({
      ...device,
      policy_id: z.number().int(),
      policy_name: z.string(),
      failed_rules: z.number().int(),
    }),
  },
  "compliance.recovered": {
    describe: "A device's configuration passes a policy it failed before.",
    payload: z.object({ ...device, policy_id: z.number().int(), policy_name: z.string() }),
  },
  "snippet.deployment.finished": {
    describe: "Every device of a snippet deployment was pushed, or failed.",
    payload: z.object({
      deployment_id: z.number().int(),
      snippet_id: z.number().int().nullable(),
      snippet_name: z.string(),
      summary: z.object({
        total: z.number().int(),
        succeeded: z.number().int(),
        failed: z.number().int(),
        skipped: z.number().int(),
      }),
    }),
  },
  "token.created": {
    describe: "An API token was issued (its value is never in the event).",
    payload: z.object({
      token_id: z.number().int(),
      token_name: z.string(),
      user_id: z.number().int(),
      username: z.string(),
      abilities: z.array(z.string()),
      expires_at: z.string().nullable(),
    }),
  },
  "token.expiring": {
    describe: "An API token expires within the settings' tokens.expiry_warning_days (sent once per token).",
    payload: z.object({
      token_id: z.number().int(),
      token_name: z.string(),
      user_id: z.number().int(),
      username: z.string(),
      expires_at: z.string(),
    }),
  },
  "token.revoked": {
    describe: "An API token was revoked.",
    payload: z.object({
      token_id: z.number().int(),
      token_name: z.string(),
      user_id: z.number().int(),
      username: z.string(),
    }),
  },
  "user.login_failed": {
    describe:
      "A sign-in was refused (wrong password, unknown or disabled user, no directory group mapped to a role, directory unreachable).",
    payload: z.object({
      username: z.string().openapi({ description: "As typed (cut to 255 characters)" }),
      ip: z.string().nullable(),
      reason: z.string(),
    }),
  },
  "user.login": {
    describe: "A user signed in to the web interface.",
    payload: z.object({
      user_id: z.number().int(),
      username: z.string(),
      ip: z.string().nullable(),
      method: z.enum(["local", "ldap", "oidc"]).openapi({
        description:
          "How the user signed in: a password checked here (local) or against the directory (ldap), or single sign-on (oidc)",
      }),
      directory: z
        .string()
        .optional()
        .openapi({ description: "With method ldap: which directory (main, or an ldap.directories entry's name)" }),
      second_factor: z
        .enum(["none", "totp", "recovery_code"])
        .openapi({ description: "What proved the second factor" }),
    }),
  },
  "user.mfa_changed": {
    describe:
      "A user's second factor changed: enrolled, turned off, reset by an administrator, recovery codes renewed, or one used.",
    payload: z.object({
      user_id: z.number().int(),
      username: z.string(),
      change: z.enum(["enabled", "disabled", "reset", "recovery_codes_renewed", "recovery_code_used"]),
      recovery_codes_left: z.number().int(),
    }),
  },
  "user.locked_out": {
    describe: "Too many failed sign-ins for a username from one address: further tries from there wait.",
    payload: z.object({ username: z.string(), ip: z.string().nullable(), retry_after_seconds: z.number().int() }),
  },
  "user.role_mapped": {
    describe: "A directory user's groups gave them another role, or none any more (the account is then disabled).",
    payload: z.object({
      user_id: z.number().int(),
      username: z.string(),
      old_role: z.string().nullable().openapi({ description: "null: the user is new" }),
      new_role: z
        .string()
        .nullable()
        .openapi({ description: "null: no group of the user is mapped to a role any more" }),
      groups: z.array(z.string()).openapi({ description: "The user's directory groups (cn) as read" }),
    }),
  },
  "webhook.ping": {
    describe: "A test delivery asked for through POST /webhooks/{id}/ping; sent to that subscription only.",
    payload: z.object({ webhook_id: z.number().int(), message: z.string() }),
  },
} as const satisfies Record<string, { describe: string; payload: z.ZodType }>;

export type EventType = keyof typeof EVENT_CATALOGUE;
export type EventPayload<T extends EventType> = z.infer<(typeof EVENT_CATALOGUE)[T]["payload"]>;
export const EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as EventType[];

/** An event as consumers and receivers see it (the webhook body). */
export const EventEnvelope = z
  .object({
    id: z.string().openapi({
      description: "evt_<n>: the same on every delivery and redelivery of the event (the webhook-id header)",
      example: "evt_42",
    }),
    type: z.enum(EVENT_TYPES as [EventType, ...EventType[]]),
    timestamp: z.string().openapi({ description: "When the change happened (ISO-8601 UTC)" }),
    data: z.record(z.string(), z.unknown()).openapi({ description: "The payload of the type (docs/events.md)" }),
  })
  .openapi("Event");
