import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { timestamp } from "./columns.ts";

/** The audit trail: one row per write, with before/after values that never include secrets. */
export const activityLog = sqliteTable(
  "activity_log",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id"),
    username: text("username"),
    tokenId: integer("token_id"),
    tokenName: text("token_name"),
    ip: text("ip"),
    action: text("action").notNull(),
    subjectType: text("subject_type").notNull(),
    subjectId: integer("subject_id"),
    changes: text("changes", { mode: "json" }).$type<Record<string, { old: unknown; new: unknown }>>(),
    createdAt: timestamp("created_at").notNull(),
  },
  (t) => [
    index("activity_log_subject_idx").on(t.subjectType, t.subjectId),
    index("activity_log_user_idx").on(t.userId),
    index("activity_log_created_idx").on(t.createdAt),
  ],
);
