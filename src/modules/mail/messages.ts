import { and, asc, eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { jobs, taskRunItems } from "../../db/schema/index.ts";
import type { DeviceRef, EventPayload } from "../../platform/outbox/catalogue.ts";
import { isInScope } from "../../platform/auth/scope.ts";
import type { StoredEvent } from "../events/index.ts";
import { visibleItems } from "../tasks/index.ts";
import { runOutcomeCounts } from "../tasks/index.ts";
import { composeMail, type MailBody } from "./compose.ts";
import type { MailMessage } from "./send.ts";
import type { Recipient } from "./recipients.ts";

/** The failed devices of a run the recipient may see, with how each failed. */
async function failedItems(db: DbOrTx, runId: number, who: Recipient) {
  return db
    .select({ device: taskRunItems.deviceName, outcome: jobs.outcome, message: jobs.message })
    .from(taskRunItems)
    .innerJoin(jobs, eq(jobs.id, taskRunItems.jobId))
    .where(
      and(
        eq(taskRunItems.runId, runId),
        eq(jobs.state, "finished"),
        sql`${jobs.outcome} not in ('success', 'unchanged')`,
        visibleItems(who.scope),
      ),
    )
    .orderBy(asc(taskRunItems.deviceName), asc(taskRunItems.id));
}

/**
 * Whether the recipient's role, as it is now, sees the device the event is about (as it was then): a role
 * narrowed between dispatching and sending (a retried send may come an hour later) no longer gets the mail.
 */
function seesDevice(event: StoredEvent, who: Recipient): boolean {
  const device = (event.payload as { device?: DeviceRef }).device;
  return !device || isInScope(who.scope, { tagIds: device.tag_ids, categoryId: device.category_id });
}

/**
 * The mail one recipient gets for one event; undefined when there is nothing for them in it (a run whose failed
 * devices are all outside their scope).
 */
export async function mailFor(db: DbOrTx, event: StoredEvent, who: Recipient): Promise<MailMessage | undefined> {
  let body: MailBody | undefined;
  if (event.type === "task.run.finished") {
    const p = event.payload as EventPayload<"task.run.finished">;
    const failed = await failedItems(db, p.run_id, who);
    if (!failed.length) return undefined;
    // The run as the recipient's role sees it through the API: counted over their devices, not the event's whole run.
    const counts = who.scope.all ? undefined : (await runOutcomeCounts(db, [p.run_id], who.scope)).get(p.run_id);
    const n = (k: "queued" | "running" | "succeeded" | "unchanged" | "failed" | "skipped") => Number(counts?.[k] ?? 0);
    const summary = counts
      ? {
          succeeded: n("succeeded"),
          unchanged: n("unchanged"),
          failed: n("failed"),
          skipped: n("skipped"),
          total: n("queued") + n("running") + n("succeeded") + n("unchanged") + n("failed") + n("skipped"),
        }
      : p.summary;
    body = {
      subject: `[netkeep] Task "${p.task_name}": ${failed.length} device${failed.length === 1 ? "" : "s"} failed (run ${p.run_id})`,
      intro: [
        `Run ${p.run_id} of task "${p.task_name}" finished at ${event.occurredAt.toISOString()}.`,
        `${summary.succeeded} succeeded, ${summary.unchanged} unchanged, ${summary.failed} failed, ${summary.skipped} skipped of ${summary.total}.`,
        "Failed devices:",
      ],
      table: {
        head: ["Device", "Outcome", "Reason"],
        rows: failed.map((f) => [f.device ?? "(deleted device)", f.outcome ?? "error", f.message ?? ""]),
      },
    };
  } else if (!seesDevice(event, who)) {
    return undefined;
  } else if (event.type === "config.changed") {
    const p = event.payload as EventPayload<"config.changed">;
    body = {
      subject: `[netkeep] ${p.device.name}: configuration changed (${p.command})`,
      intro: [
        `A download of ${p.device.name} (${p.device.ip}) at ${event.occurredAt.toISOString()} stored a new version of "${p.command}".`,
        p.old_version_id === null
          ? "It is the first version stored."
          : `${p.lines_added} lines added, ${p.lines_removed} removed since the version before.`,
        `New version id: ${p.new_version_id}.`,
      ],
    };
  } else if (event.type === "compliance.failed") {
    const p = event.payload as EventPayload<"compliance.failed">;
    body = {
      subject: `[netkeep] ${p.device.name}: fails policy "${p.policy_name}"`,
      intro: [
        `${p.device.name} (${p.device.ip}) no longer passes the compliance policy "${p.policy_name}" (checked ${event.occurredAt.toISOString()}).`,
        `${p.failed_rules} rule${p.failed_rules === 1 ? "" : "s"} failed.`,
      ],
    };
  }
  return body && composeMail([who.email], body);
}
