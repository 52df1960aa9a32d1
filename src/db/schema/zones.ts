import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamp, timestamps } from "./columns.ts";
import { nameKeyColumn } from "../name-key.ts";
import { tags } from "./inventory.ts";

/** `local`: the collectors beside the API (the database's own) poll it; `remote`: only its enrolled site collectors. */
export const ZONE_MODES = ["local", "remote"] as const;
export type ZoneMode = (typeof ZONE_MODES)[number];

/** The zone every device starts in and every device of an upgraded database was put in (its migration). */
export const LOCAL_ZONE_ID = 1;

/**
 * Where a device can be reached from. A remote zone's devices are polled only by the collectors enrolled with its
 * enrollment key (of which only a hash is kept, null once revoked).
 */
export const zones = sqliteTable(
  "zones",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    nameKey: nameKeyColumn("name_key"),
    description: text("description").notNull().default(""),
    mode: text("mode", { enum: ZONE_MODES }).notNull().default("local"),
    enrollmentKeyHash: text("enrollment_key_hash"),
    enrollmentKeyCreatedAt: timestamp("enrollment_key_created_at"),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("zones_name_key_unique").on(t.nameKey),
    index("zones_enrollment_key_idx").on(t.enrollmentKeyHash),
  ],
);

/** Tags every device of the zone carries as if they were its own (role scopes follow them: src/platform/auth/scope.ts). */
export const zoneTags = sqliteTable(
  "zone_tags",
  {
    zoneId: integer("zone_id")
      .notNull()
      .references(() => zones.id, { onDelete: "cascade" }),
    tagId: integer("tag_id")
      .notNull()
      .references(() => tags.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.zoneId, t.tagId] }), index("zone_tags_tag_idx").on(t.tagId)],
);

/**
 * A site collector enrolled in a remote zone: the X25519 public key device credentials are sealed to, the hash of
 * the credential it authenticates with, and what its last heartbeat said. Revoked: refused from then on.
 */
export const remoteCollectors = sqliteTable(
  "remote_collectors",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    zoneId: integer("zone_id")
      .notNull()
      .references(() => zones.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** Raw 32-byte X25519 public key, base64. */
    publicKey: text("public_key").notNull(),
    credentialHash: text("credential_hash").notNull(),
    revokedAt: timestamp("revoked_at"),
    lastSeenAt: timestamp("last_seen_at"),
    version: text("version").notNull().default(""),
    sessions: integer("sessions").notNull().default(0),
    spoolBytes: integer("spool_bytes").notNull().default(0),
    spoolDropped: integer("spool_dropped").notNull().default(0),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("remote_collectors_credential_idx").on(t.credentialHash),
    index("remote_collectors_zone_idx").on(t.zoneId),
  ],
);

/**
 * Each result a remote collector delivered, by the key it chose: a retried upload answers what the first one did
 * and stores nothing again.
 */
export const collectorUploads = sqliteTable(
  "collector_uploads",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    collectorId: integer("collector_id")
      .notNull()
      .references(() => remoteCollectors.id, { onDelete: "cascade" }),
    uploadKey: text("upload_key").notNull(),
    jobId: integer("job_id"),
    answer: text("answer", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("collector_uploads_key_idx").on(t.collectorId, t.uploadKey),
    index("collector_uploads_created_idx").on(t.createdAt),
  ],
);
