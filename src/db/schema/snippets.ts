import { sql } from "drizzle-orm";
import { integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamps } from "./columns.ts";
import { nameKeyColumn } from "../name-key.ts";

/** A named block of configuration lines with `{name}` variables, pushed to devices by send and deploy. */
export const snippets = sqliteTable(
  "snippets",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    nameKey: nameKeyColumn("name_key"),
    description: text("description").notNull().default(""),
    content: text("content").notNull(),
    /** Lines run when a push of `content` fails (optional; empty means none). */
    rollbackContent: text("rollback_content").notNull().default(""),
    /** Connection templates the snippet is written for; empty means any. Advisory: shown, not enforced. */
    templateIds: text("template_ids", { mode: "json" }).$type<number[]>().notNull().default(sql`'[]'`),
    tags: text("tags", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    ...timestamps,
  },
  (t) => [uniqueIndex("snippets_name_key_unique").on(t.nameKey)],
);
