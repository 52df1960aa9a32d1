/**
 * Tasks as rConfig's StoreTaskRequest sends them: its relations as `device`, `task_tags` (or `tag`) and
 * `category`, each a list of {"id": n} (its prepareForValidation plucks the ids), become netkeep's `devices`,
 * `tags` and `categories`; its notification switches, which netkeep has no match for, are dropped. Answers carry
 * rConfig's success and message beside the task.
 */
import { z } from "@hono/zod-openapi";
import { jsonObjectBody, replaceJsonBody, succeeded, type CompatHook } from "./hook.ts";
import { extendTop } from "./envelope.ts";
import { withListRewrite } from "./lists.ts";

/** rConfig's relation field -> netkeep's id list. */
const RELATIONS: Record<string, string> = { device: "devices", task_tags: "tags", tag: "tags", category: "categories" };
/**
 * rConfig's task fields netkeep has no match for: its mail switches (netkeep mails failures to subscribers,
 * notify_on_failure), and the flags its form sends along.
 */
const DROPPED = [
  "task_email_notify",
  "download_report_notify",
  "verbose_download_report_notify",
  "task_devices",
  "task_categories",
  "is_system",
];

/** [{"id": n}] or ids -> ids; anything else is left for the validator to name. */
const pluckIds = (v: unknown) =>
  Array.isArray(v)
    ? v.map((item) => (item && typeof item === "object" && "id" in item ? (item as { id: unknown }).id : item))
    : v;

export function normaliseTaskBody(body: Record<string, unknown>): Record<string, unknown> {
  const out = { ...body };
  for (const [theirs, ours] of Object.entries(RELATIONS)) {
    if (!(theirs in out)) continue;
    if (out[ours] === undefined) out[ours] = pluckIds(out[theirs]);
    delete out[theirs];
  }
  for (const key of DROPPED) delete out[key];
  return out;
}

const IdRefs = z.array(z.union([z.object({ id: z.number().int() }), z.number().int()]));
const taskWrite = (message: string): CompatHook => ({
  request: async (c) => {
    const body = await jsonObjectBody(c);
    if (body) replaceJsonBody(c, normaliseTaskBody(body));
  },
  requestFields: {
    device: IdRefs.optional().openapi({
      description: 'rConfig\'s name for devices, as [{"id": n}]; devices wins when both are sent',
      example: [{ id: 1 }],
    }),
    task_tags: IdRefs.optional().openapi({
      description: 'rConfig\'s name for tags, as [{"id": n}]',
      example: [{ id: 3 }],
    }),
    tag: IdRefs.optional().openapi({ description: "rConfig's other name for tags" }),
    category: IdRefs.optional().openapi({ description: 'rConfig\'s name for categories, as [{"id": n}]' }),
    ...Object.fromEntries(
      DROPPED.map((key) => [key, z.unknown().optional().openapi({ description: "rConfig's; accepted and ignored" })]),
    ),
  },
  response: async (_c, body) => ({ body: succeeded(body, message) }),
  document: (responses) => extendTop(responses),
});

export const taskHooks: Record<string, CompatHook> = {
  createTask: taskWrite("Task created successfully!"),
  replaceTask: taskWrite("Task edited successfully!"),
  updateTask: taskWrite("Task edited successfully!"),
  listTasks: withListRewrite(
    {},
    { filters: { task_command: "task_type" } },
    "rConfig's filter[q] is search and filter[task_command] is filter[task_type] (docs/rconfig.md).",
  ),
};
