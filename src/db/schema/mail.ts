import { sql } from "drizzle-orm";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { timestamp } from "./columns.ts";
import { users } from "./auth.ts";

/**
 * What mail a user asked for (src/modules/mail/): failed runs of tasks with notify_on_failure, configuration
 * changes (of devices carrying one of `config_change_tag_ids`, or any device when empty), compliance failures.
 * Always within the user's role scope. No row: no mail.
 */
export const mailSubscriptions = sqliteTable("mail_subscriptions", {
  userId: integer("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  taskFailures: integer("task_failures", { mode: "boolean" }).notNull().default(false),
  configChanges: integer("config_changes", { mode: "boolean" }).notNull().default(false),
  configChangeTagIds: text("config_change_tag_ids", { mode: "json" }).$type<number[]>().notNull().default(sql`'[]'`),
  complianceFailures: integer("compliance_failures", { mode: "boolean" }).notNull().default(false),
  updatedAt: timestamp("updated_at").notNull(),
});
