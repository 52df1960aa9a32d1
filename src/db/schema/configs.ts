import { sql } from "drizzle-orm";
import { blob, index, integer, sqliteTable, text, uniqueIndex, type AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import { timestamp, timestamps } from "./columns.ts";
import { devices } from "./devices.ts";
import { jobs, JOB_TRIGGERS } from "./jobs.ts";

/**
 * Preset dictionaries for compressing one command's texts (blob-codec.ts): a sample of that command's output
 * (the configuration that compresses the others best), so each stored text costs about what is its own. Never
 * changed; deleted only once no text uses it (the key on config_blobs.dictionary_id enforces it).
 */
export const configDictionaries = sqliteTable("config_dictionaries", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  command: text("command").notNull(),
  /** SHA-256 of the content, hex: readers cache dictionaries by it (ids repeat across databases). */
  hash: text("hash").notNull(),
  content: blob("content", { mode: "buffer" }).notNull(),
  createdAt: timestamp("created_at").notNull(),
});

/**
 * Content-addressed configuration text: the same text is stored once, compressed, whatever refers to it. The
 * latest version of a series is whole; older ones are reverse deltas (a line edit script, blob-delta.ts) against
 * the text that followed them, so history costs about what changed. A download stores gzip ("gzip", "delta");
 * storage maintenance recompresses with the command's dictionary ("deflate", "deflate-delta", blob-codec.ts).
 */
export const configBlobs = sqliteTable(
  "config_blobs",
  {
    /** SHA-256 of the raw text, hex. */
    hash: text("hash").primaryKey(),
    encoding: text("encoding", { enum: ["gzip", "delta", "deflate", "deflate-delta"] }).notNull(),
    /**
     * A short key, given to a blob when it first becomes a delta's base: a delta names its base by it (base_id), a
     * few bytes where a hash took 64 in the row and again in the index.
     */
    id: integer("id"),
    /** The blob a delta rebuilds from; null when whole. The key keeps a base from being deleted under its deltas. */
    baseId: integer("base_id").references((): AnySQLiteColumn => configBlobs.id),
    /** The same by hash, as deltas stored before base_id named their base; maintenance moves them to base_id. */
    baseHash: text("base_hash").references((): AnySQLiteColumn => configBlobs.hash),
    /** The preset dictionary of a "deflate" or "deflate-delta" content; null: none. */
    dictionaryId: integer("dictionary_id").references(() => configDictionaries.id),
    content: blob("content", { mode: "buffer" }).notNull(),
    size: integer("size").notNull(),
    createdAt: timestamp("created_at").notNull(),
  },
  (t) => [
    // Whole texts have no base: only deltas need finding by it (and the foreign key's checks use this too).
    index("config_blobs_base_idx").on(t.baseHash).where(sql`${t.baseHash} is not null`),
    index("config_blobs_base_id_idx").on(t.baseId).where(sql`${t.baseId} is not null`),
    // Not partial: a foreign key's parent needs a full unique index (blobs without an id cost a few bytes in it).
    uniqueIndex("config_blobs_id_unique").on(t.id),
  ],
);

/** One row per distinct version of one command's output on one device. */
export const configs = sqliteTable(
  "configs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    deviceId: integer("device_id")
      .notNull()
      .references(() => devices.id, { onDelete: "cascade" }),
    command: text("command").notNull(),
    version: integer("version").notNull(),
    blobHash: text("blob_hash")
      .notNull()
      .references(() => configBlobs.hash),
    /**
     * Hash of the text without volatile lines: equal hashes are the same configuration. Only a series' latest
     * version is compared, so an older one's is cleared ("") when the next arrives; a version that becomes the
     * latest again (the one after it deleted) is compared by its text once, which stores its hash again.
     */
    significantHash: text("significant_hash").notNull(),
    /**
     * HMAC of the secret values the stored text had masked (configs/storage/secrets-digest.ts), never the values: a
     * download whose masked text is the same but whose digest differs is a new version with secretsChanged. Null
     * for versions stored before it was kept, or without a key to digest with.
     */
    secretsDigest: text("secrets_digest"),
    /** The secret values differ from the version before (a rotated key), which the stored texts cannot show. */
    secretsChanged: integer("secrets_changed", { mode: "boolean" }).notNull().default(false),
    lines: integer("lines").notNull(),
    size: integer("size").notNull(),
    firstSeenAt: timestamp("first_seen_at").notNull(),
    lastSeenAt: timestamp("last_seen_at").notNull(),
    seenCount: integer("seen_count").notNull().default(1),
    /** The job whose download produced this version. */
    jobId: integer("job_id").references(() => jobs.id, { onDelete: "set null" }),
  },
  (t) => [
    uniqueIndex("configs_device_command_version_unique").on(t.deviceId, t.command, t.version),
    index("configs_blob_idx").on(t.blobHash),
    index("configs_last_seen_idx").on(t.lastSeenAt),
  ],
);

/**
 * A new version's arrival: how many lines it changed against the previous version. The diff itself is rendered
 * from the two texts when asked; it is stored only once the previous version is deleted (it could not be rebuilt).
 */
export const configChanges = sqliteTable(
  "config_changes",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    deviceId: integer("device_id")
      .notNull()
      .references(() => devices.id, { onDelete: "cascade" }),
    command: text("command").notNull(),
    configId: integer("config_id")
      .notNull()
      .references(() => configs.id, { onDelete: "cascade" }),
    previousConfigId: integer("previous_config_id").references(() => configs.id, { onDelete: "set null" }),
    /** Null: rendered on demand from the two versions' texts. */
    diff: text("diff"),
    linesAdded: integer("lines_added").notNull(),
    linesRemoved: integer("lines_removed").notNull(),
    trigger: text("trigger", { enum: JOB_TRIGGERS }).notNull(),
    /** Who changed the configuration, as the device's syslog message said ("changed by admin from 10.0.0.5 via vty0"); null: not known. */
    changedBy: text("changed_by"),
    createdAt: timestamp("created_at").notNull(),
  },
  (t) => [
    index("config_changes_device_idx").on(t.deviceId, t.createdAt),
    index("config_changes_config_idx").on(t.configId),
    // The change feed (API and web) and the dashboard read the newest changes first: without it, every page sorted them all.
    // With the device id, what counts a range's changes per device (reports, the dashboard, the feed's total in a
    // scope) reads the index alone, not each change's row with its diff.
    index("config_changes_created_idx").on(t.createdAt, t.deviceId),
  ],
);

/**
 * Lines to leave out when deciding whether a download is a new version (and, on request, in diffs): a regular
 * expression matched against each line, for every command or one. Editing them never touches stored versions.
 */
export const compareExclusions = sqliteTable("compare_exclusions", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  pattern: text("pattern").notNull(),
  /** Null: every command. */
  command: text("command"),
  ignoreCase: integer("ignore_case", { mode: "boolean" }).notNull().default(false),
  description: text("description").notNull().default(""),
  enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
  ...timestamps,
});
