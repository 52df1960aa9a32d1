import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamp } from "./columns.ts";
import { users } from "./auth.ts";

/**
 * Web interface logins. The cookie carries a random value; only its SHA-256 is stored, so a copy of the database
 * opens no session. A session ends at `expiresAt` (pushed forward while it is used), at logout, or with its user.
 */
export const webSessions = sqliteTable(
  "web_sessions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    sessionHash: text("session_hash").notNull(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    ip: text("ip"),
    userAgent: text("user_agent"),
    createdAt: timestamp("created_at").notNull(),
    lastSeenAt: timestamp("last_seen_at").notNull(),
    expiresAt: timestamp("expires_at").notNull(),
    /** Password proven, second factor not yet: the session opens only the second-factor page. */
    secondFactorPending: integer("second_factor_pending", { mode: "boolean" }).notNull().default(false),
  },
  (t) => [
    uniqueIndex("web_sessions_hash_unique").on(t.sessionHash),
    index("web_sessions_user_idx").on(t.userId),
    index("web_sessions_expires_idx").on(t.expiresAt),
  ],
);
