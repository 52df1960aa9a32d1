import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamp, timestamps } from "./columns.ts";
import { nameKeyColumn } from "../name-key.ts";
import { categories, credentials, deviceProfiles, tags, templates, vendors } from "./inventory.ts";
import { LOCAL_ZONE_ID, zones } from "./zones.ts";

export const DEVICE_STATUSES = ["unknown", "up", "unreachable"] as const;
export type DeviceStatus = (typeof DEVICE_STATUSES)[number];

export const devices = sqliteTable(
  "devices",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    nameKey: nameKeyColumn("name_key"),
    ip: text("ip").notNull(),
    vendorId: integer("vendor_id").references(() => vendors.id),
    model: text("model").notNull().default(""),
    categoryId: integer("category_id").references(() => categories.id),
    templateId: integer("template_id").references(() => templates.id),
    /** Null: the device's own username/password below. */
    credId: integer("cred_id").references(() => credentials.id),
    /**
     * Whether the device's credential set is found by trying the sets marked for discovery (credId then holds
     * the one that last worked); a set that stops working is looked for again (collector/credential-discovery.ts).
     */
    discoverCredentials: integer("discover_credentials", { mode: "boolean" }).notNull().default(false),
    /** Null: snippets reuse the primary credentials. */
    snippetCredId: integer("snippet_cred_id").references(() => credentials.id),
    portOverride: integer("port_override"),
    /** The zone whose collectors reach the device (zones.ts). */
    zoneId: integer("zone_id")
      .notNull()
      .default(LOCAL_ZONE_ID)
      .references(() => zones.id),
    profileId: integer("profile_id").references(() => deviceProfiles.id, { onDelete: "set null" }),
    username: text("username").notNull().default(""),
    passwordEnc: text("password_enc"),
    enablePasswordEnc: text("enable_password_enc"),
    custom: text("custom", { mode: "json" })
      .$type<Record<string, string | number | boolean | null>>()
      .notNull()
      .default(sql`'{}'`),
    notes: text("notes").notNull().default(""),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    status: text("status", { enum: DEVICE_STATUSES }).notNull().default("unknown"),
    /** The SSH host key fingerprint pinned on first contact ("SHA256:..."); a different key fails the job. */
    hostKeyFingerprint: text("host_key_fingerprint"),
    /** Inventory read by the last successful backup or detection (the template's detect patterns); null: not read. */
    serial: text("serial"),
    osVersion: text("os_version"),
    hostname: text("hostname"),
    inventoryAt: timestamp("inventory_at"),
    lastSeenAt: timestamp("last_seen_at"),
    lastBackupAt: timestamp("last_backup_at"),
    /**
     * The template's snmp.config_changed_oid as read before the last successful download (null: not read), and
     * when: a later download finding the same value skips the login (collector/snmp.ts).
     */
    snmpConfigChangedValue: text("snmp_config_changed_value"),
    snmpConfigChangedAt: timestamp("snmp_config_changed_at"),
    /**
     * The device's newest finished download that was attempted (not cancelled): its job, outcome and end. Kept by
     * triggers on jobs (migration device_counts_triggers), so the dashboard and the summaries read it per device
     * instead of searching each device's jobs.
     */
    lastDownloadJobId: integer("last_download_job_id"),
    lastDownloadOutcome: text("last_download_outcome"),
    lastDownloadAt: timestamp("last_download_at"),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("devices_name_key_unique").on(t.nameKey),
    index("devices_vendor_idx").on(t.vendorId),
    index("devices_category_idx").on(t.categoryId),
    index("devices_cred_idx").on(t.credId),
    index("devices_zone_idx").on(t.zoneId),
    // The device list sorted by name (its sort is lower(name)) and filtered by status: without these, every
    // page of either read and sorted every device (bench:estate). The status index also holds what the device
    // summary counts (enabled, last backup), so the summary reads it instead of every device's row.
    index("devices_name_lower_idx").on(sql`lower(${t.name})`),
    index("devices_status_idx").on(t.status, t.enabled, t.lastBackupAt),
    // The dashboard's devices added last (newest first, then the highest id: the index's own order).
    index("devices_created_idx").on(t.createdAt),
    // The newest backup and download of the fleet (min/max over an index), and the devices failing now, newest
    // failure first, without a look at every device.
    index("devices_last_backup_idx").on(t.lastBackupAt),
    index("devices_last_download_idx").on(t.lastDownloadAt),
    index("devices_failing_idx")
      .on(t.lastDownloadAt)
      .where(sql`${t.enabled} = 1 and ${t.lastDownloadOutcome} not in ('success', 'unchanged')`),
  ],
);

/** A device's last download as device_counts tallies it: none yet, backed up (success, unchanged) or failed. */
export const LAST_DOWNLOAD_CLASSES = ["none", "good", "bad"] as const;

/**
 * How many devices are in each state: enabled, status, backed up (last_backup_at set) and the class of their last
 * download. Kept by triggers on devices (migration device_counts_triggers) on every write, whatever writes it, so
 * the fleet's counts (dashboard, device summary) read a few rows instead of every device.
 */
export const deviceCounts = sqliteTable(
  "device_counts",
  {
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    status: text("status", { enum: DEVICE_STATUSES }).notNull(),
    backedUp: integer("backed_up", { mode: "boolean" }).notNull(),
    lastDownload: text("last_download", { enum: LAST_DOWNLOAD_CLASSES }).notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ columns: [t.enabled, t.status, t.backedUp, t.lastDownload] })],
);

export const deviceTags = sqliteTable(
  "device_tags",
  {
    deviceId: integer("device_id")
      .notNull()
      .references(() => devices.id, { onDelete: "cascade" }),
    tagId: integer("tag_id")
      .notNull()
      .references(() => tags.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.deviceId, t.tagId] }), index("device_tags_tag_idx").on(t.tagId)],
);
