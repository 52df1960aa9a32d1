import { integer } from "drizzle-orm/sqlite-core";

/** Times are stored as epoch milliseconds (sortable, compact) and leave the API as ISO-8601 UTC. */
export const timestamp = (name: string) => integer(name, { mode: "timestamp_ms" });

export const timestamps = {
  createdAt: timestamp("created_at").notNull(),
  updatedAt: timestamp("updated_at").notNull(),
};
