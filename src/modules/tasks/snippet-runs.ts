import { z } from "@hono/zod-openapi";
import { asc, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import {
  devices,
  snippets,
  taskRunItems,
  type tasks,
  vendors,
  type JobTrigger,
  type SnippetTaskOptions,
  type TaskType,
} from "../../db/schema/index.ts";
import type { AuthContext } from "../../platform/http/env.ts";
import { ApiError, type FieldErrorBag } from "../../platform/http/errors.ts";
import { taskTargetCondition } from "./targets.ts";
import { createDeployment } from "../snippets/index.ts";
import { renderTargets } from "../snippets/index.ts";

/** A `snippet` task's deploy settings: the deploy body's guard rails and variables, kept with the task. */
export const SnippetTaskOptionsInput = z
  .object({
    dynamic_vars: z
      .record(
        z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "variable names are letters, digits and underscores"),
        z
          .string()
          .max(4000)
          .regex(/^[^\r\n]*$/, "must be one line"),
      )
      .optional(),
    canary: z.number().int().min(0).optional(),
    stop_on_failure: z.boolean().optional(),
    concurrency: z.number().int().min(1).max(100).optional(),
    confirm_device_count: z.number().int().min(1).optional().openapi({
      description:
        "When set, a run whose targets number otherwise pushes nothing (every device skipped, saying why); required above 25 devices",
    }),
  })
  .openapi({
    description:
      "snippet tasks: dynamic_vars, canary, stop_on_failure, concurrency, confirm_device_count (as the deploy body)",
    example: { dynamic_vars: { ntp: "10.0.0.5" }, stop_on_failure: true },
  });

/**
 * The snippet columns a task write ends with: a `snippet` task names an existing snippet, and only a caller who
 * may push snippets (snippets.write) may make or change one; other types carry none.
 */
export async function snippetTaskValues(
  tx: DbOrTx,
  bag: FieldErrorBag,
  auth: AuthContext,
  type: TaskType,
  input: { snippet_id?: number | null; snippet_options?: SnippetTaskOptions | null },
  before: typeof tasks.$inferSelect | null,
  patch: boolean,
): Promise<{ snippetId: number | null; snippetOptions: SnippetTaskOptions | null }> {
  if (type !== "snippet") {
    if (input.snippet_id != null) bag.add("snippet_id", `snippet_id is only for snippet tasks, not ${type}`);
    return { snippetId: null, snippetOptions: null };
  }
  if (!auth.abilities.has("snippets.write"))
    throw new ApiError(403, "Invalid ability provided: a snippet task pushes configuration and needs snippets.write");
  const keep = patch && before?.type === "snippet";
  const snippetId = input.snippet_id !== undefined ? input.snippet_id : keep ? before!.snippetId : null;
  if (snippetId == null) bag.add("snippet_id", "snippet_id is required for snippet tasks");
  else if (!(await tx.select({ id: snippets.id }).from(snippets).where(eq(snippets.id, snippetId))).length)
    bag.add("snippet_id", `snippet_id ${snippetId} is not an existing snippet`);
  const snippetOptions =
    input.snippet_options !== undefined ? (input.snippet_options ?? {}) : keep ? (before!.snippetOptions ?? {}) : {};
  return { snippetId: snippetId ?? null, snippetOptions };
}

/**
 * A run of a `snippet` task: one item per device the task reaches (disabled ones skipped), rendered and recorded
 * as a deployment whose pushes fill in the items' jobs as they are queued (canary, concurrency). A run that cannot
 * push (the snippet deleted, a variable missing, the device count not the confirmed one) skips every device and
 * says why. Returns how many pushes it queued.
 */
export async function startSnippetRun(
  tx: DbOrTx,
  task: typeof tasks.$inferSelect,
  runId: number,
  as: { trigger: JobTrigger; requestedBy: number | null },
  now: Date,
): Promise<number> {
  const targets = await tx
    .select({ device: devices, vendorName: vendors.name })
    .from(devices)
    .leftJoin(vendors, eq(vendors.id, devices.vendorId))
    .where(taskTargetCondition(task))
    .orderBy(asc(devices.name), asc(devices.id));
  const enabled = targets.filter((t) => t.device.enabled);
  const options = task.snippetOptions ?? {};
  const [snippet] =
    task.snippetId === null ? [] : await tx.select().from(snippets).where(eq(snippets.id, task.snippetId));
  let refusal: string | null = null;
  let rendered: ReturnType<typeof renderTargets> = [];
  if (!snippet) refusal = "the task's snippet was deleted";
  else if (
    options.confirm_device_count !== undefined ? options.confirm_device_count !== enabled.length : enabled.length > 25
  ) {
    refusal = `the run reaches ${enabled.length} devices but confirm_device_count is ${options.confirm_device_count ?? "not set (required above 25)"}`;
  } else {
    try {
      rendered = renderTargets(enabled, snippet.content, snippet.rollbackContent, options.dynamic_vars ?? {});
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      refusal = err.message;
    }
  }
  const items = targets.map((t) => ({
    runId,
    deviceId: t.device.id,
    deviceName: t.device.name,
    jobId: null,
    skipReason: !t.device.enabled ? "disabled" : refusal,
  }));
  for (let i = 0; i < items.length; i += 500) await tx.insert(taskRunItems).values(items.slice(i, i + 500));
  if (refusal || !rendered.length) return 0;
  const canary = Math.min(options.canary ?? 0, rendered.length - 1);
  const id = await createDeployment(
    tx,
    {
      snippet: snippet!,
      kind: "task",
      targets: rendered,
      taskRunId: runId,
      requestedBy: as.requestedBy,
      trigger: as.trigger,
      options: { canary, stopOnFailure: options.stop_on_failure ?? false, concurrency: options.concurrency ?? 10 },
    },
    now,
  );
  return id ? rendered.length : 0;
}
