import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { timestamp } from "./columns.ts";
import { configs } from "./configs.ts";
import { devices } from "./devices.ts";

/**
 * The documents of the configuration search index, one per stored version of a series (device and command):
 * the first version's whole text, then only the lines each later version added. Every line of every stored
 * version is in some document of its series, so the index finds every series a search can match, at about
 * the size of one version per series. The text itself lives only in the FTS5 table `config_search`
 * (drizzle/…_0002_search_index.sql), whose rowid is this table's id; a trigger removes it with this row.
 * Documents of deleted versions stay until the series is purged: they can only add candidates, never hide one.
 */
export const configSearchDocs = sqliteTable(
  "config_search_docs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    deviceId: integer("device_id")
      .notNull()
      .references(() => devices.id, { onDelete: "cascade" }),
    command: text("command").notNull(),
    /** The version whose arrival made this document (no foreign key: the document may outlive it). */
    configId: integer("config_id").notNull(),
  },
  (t) => [
    // By device alone: a device has few documents, and the command would be stored again in every entry.
    index("config_search_docs_device_idx").on(t.deviceId),
  ],
);

/**
 * Stored versions not yet in the search index. Storing a version only queues it here: building its document costs
 * more than the rest of storing it, so the collector indexes the queue in batches when it has time
 * (search-index.ts). Until then search treats the version's series as a candidate and reads its text, so a queued
 * version is found all the same. Deleting the version takes its row with it.
 */
export const configSearchPending = sqliteTable("config_search_pending", {
  configId: integer("config_id")
    .primaryKey()
    .references(() => configs.id, { onDelete: "cascade" }),
  deviceId: integer("device_id").notNull(),
  command: text("command").notNull(),
});

/**
 * Tokens of the search index that nearly every series holds (search-common-grams.ts): documents leave them out
 * and lookups do not ask for them, which keeps the index to what tells configurations apart. One row (id 1);
 * `grams` is a JSON array of tokens, `count` its length. The list only ever grows: a document written while a
 * token was common lacks it, so a lookup may never ask for that token again. `key` is made once per database,
 * so processes caching lists of several databases never mix them.
 */
export const configSearchCommonGrams = sqliteTable("config_search_common_grams", {
  id: integer("id").primaryKey(),
  key: text("key").notNull(),
  count: integer("count").notNull(),
  grams: text("grams", { mode: "json" }).$type<string[]>().notNull(),
});

/**
 * The configuration retention policy: one row (id 1). A version older than keep_days (by when a download last
 * saw it) and beyond the newest keep_versions of its series is purged; a rule left null does not limit; with
 * both null nothing is purged. The latest version of every series is always kept.
 */
export const configRetentionPolicy = sqliteTable("config_retention_policy", {
  id: integer("id").primaryKey(),
  keepDays: integer("keep_days"),
  keepVersions: integer("keep_versions"),
  updatedAt: timestamp("updated_at"),
});
