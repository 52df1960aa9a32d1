import { and, eq } from "drizzle-orm";
import { isInScope, type DeviceScope } from "../../platform/auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import { mailSubscriptions, roles, tasks, users } from "../../db/schema/index.ts";
import type { DeviceRef, EventPayload } from "../../platform/outbox/catalogue.ts";
import type { StoredEvent } from "../events/index.ts";

export type Recipient = { userId: number; username: string; email: string; scope: DeviceScope };

const recipientColumns = {
  userId: users.id,
  username: users.username,
  email: users.email,
  scopeAll: roles.scopeAll,
  scopeTagIds: roles.scopeTagIds,
  scopeCategoryIds: roles.scopeCategoryIds,
};
type RecipientRow = {
  userId: number;
  username: string;
  email: string;
  scopeAll: boolean;
  scopeTagIds: number[];
  scopeCategoryIds: number[];
};
const asRecipient = (r: RecipientRow): Recipient => ({
  userId: r.userId,
  username: r.username,
  email: r.email,
  scope: r.scopeAll ? { all: true } : { all: false, tagIds: r.scopeTagIds, categoryIds: r.scopeCategoryIds },
});

/** Enabled users with a subscription row, with their role's scope. */
function subscriberRows(db: DbOrTx) {
  return db
    .select({ ...recipientColumns, sub: mailSubscriptions })
    .from(mailSubscriptions)
    .innerJoin(users, eq(users.id, mailSubscriptions.userId))
    .innerJoin(roles, eq(roles.id, users.roleId))
    .where(eq(users.enabled, true));
}

const sees = (r: RecipientRow, device: DeviceRef) =>
  isInScope(asRecipient(r).scope, { tagIds: device.tag_ids, categoryId: device.category_id });

/**
 * Who gets a mail about each event of a dispatch pass, one user each: a run with failures of a task with
 * notify_on_failure goes to the users subscribed to task failures; a configuration change to those subscribed to
 * changes (of a device with one of their tags, when they named tags); a compliance failure to those subscribed to
 * it. A device event reaches only users whose role sees the device. The subscribers are read once, at the first
 * event that needs them.
 */
export function mailRecipients(db: DbOrTx): (event: StoredEvent) => Promise<number[]> {
  let read: Promise<SubscriberRow[]> | undefined;
  const subscribers = () => (read ??= (async () => await subscriberRows(db))());
  return (event) => recipientsOf(db, event, subscribers);
}

type SubscriberRow = Awaited<ReturnType<typeof subscriberRows>>[number];

async function recipientsOf(
  db: DbOrTx,
  event: StoredEvent,
  subscribers: () => Promise<SubscriberRow[]>,
): Promise<number[]> {
  if (event.type === "task.run.finished") {
    const payload = event.payload as EventPayload<"task.run.finished">;
    if (payload.summary.failed === 0) return [];
    const [task] = await db.select({ notify: tasks.notifyOnFailure }).from(tasks).where(eq(tasks.id, payload.task_id));
    if (!task?.notify) return [];
    return (await subscribers()).filter((r) => r.sub.taskFailures).map((r) => r.userId);
  }
  if (event.type === "config.changed") {
    const { device } = event.payload as EventPayload<"config.changed">;
    return (await subscribers())
      .filter((r) => r.sub.configChanges && sees(r, device))
      .filter(
        (r) => !r.sub.configChangeTagIds.length || r.sub.configChangeTagIds.some((t) => device.tag_ids.includes(t)),
      )
      .map((r) => r.userId);
  }
  if (event.type === "compliance.failed") {
    const { device } = event.payload as EventPayload<"compliance.failed">;
    return (await subscribers()).filter((r) => r.sub.complianceFailures && sees(r, device)).map((r) => r.userId);
  }
  return [];
}

/** The user a mail job is for, as they are now; undefined when gone or disabled since. */
export async function recipient(db: DbOrTx, userId: number): Promise<Recipient | undefined> {
  const [row] = await db
    .select(recipientColumns)
    .from(users)
    .innerJoin(roles, eq(roles.id, users.roleId))
    .where(and(eq(users.id, userId), eq(users.enabled, true)));
  return row ? asRecipient(row) : undefined;
}
