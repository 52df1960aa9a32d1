import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamp } from "./columns.ts";
import { apiTokens } from "./auth.ts";

/**
 * Create requests sent with an Idempotency-Key header (src/platform/http/idempotency.ts): one row per token and key,
 * claimed by the first request (state "running") and holding its answer once it succeeded ("done"), so a
 * retry gets that answer instead of a second record. The unique index is the claim: of two processes
 * inserting the same token and key, one wins. A request that fails deletes its row; rows expire after 24 h.
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    tokenId: integer("token_id")
      .notNull()
      .references(() => apiTokens.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    /** "POST /api/v1/devices": the same key on another route is another request. */
    route: text("route").notNull(),
    /** SHA-256 of the request body, hex. */
    requestHash: text("request_hash").notNull(),
    state: text("state", { enum: ["running", "done"] }).notNull(),
    status: integer("status"),
    /** The answer's JSON body and Location, as the first request sent them. */
    body: text("body"),
    location: text("location"),
    createdAt: timestamp("created_at").notNull(),
    expiresAt: timestamp("expires_at").notNull(),
  },
  (t) => [
    uniqueIndex("idempotency_keys_token_key_unique").on(t.tokenId, t.key),
    index("idempotency_keys_expires_idx").on(t.expiresAt),
  ],
);
