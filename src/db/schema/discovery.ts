import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamp, timestamps } from "./columns.ts";
import { devices } from "./devices.ts";
import { credentials, templates } from "./inventory.ts";

export const CANDIDATE_STATES = ["pending", "adopted", "ignored"] as const;
export type CandidateState = (typeof CANDIDATE_STATES)[number];

/**
 * An address a discovery found answering (src/modules/discovery/): where it answered, the credential set that
 * logged in, and what detection read. One row per address: a later scan updates it, never duplicates it.
 */
export const discoveryCandidates = sqliteTable(
  "discovery_candidates",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    address: text("address").notNull(),
    port: integer("port").notNull(),
    protocol: text("protocol", { enum: ["ssh", "telnet"] }).notNull(),
    /** Null: no discovery set logged in (the address answers, but is not adoptable until one does). */
    credId: integer("cred_id").references(() => credentials.id, { onDelete: "set null" }),
    templateId: integer("template_id").references(() => templates.id, { onDelete: "set null" }),
    vendor: text("vendor"),
    model: text("model"),
    osVersion: text("os_version"),
    serial: text("serial"),
    hostname: text("hostname"),
    /** Why it is not adoptable yet (no set logged in, no template recognised it), or null. */
    problem: text("problem"),
    state: text("state", { enum: CANDIDATE_STATES }).notNull().default("pending"),
    deviceId: integer("device_id").references(() => devices.id, { onDelete: "set null" }),
    presetId: integer("preset_id").references(() => scanPresets.id, { onDelete: "set null" }),
    foundAt: timestamp("found_at").notNull(),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("discovery_candidates_address_unique").on(t.address),
    index("discovery_candidates_state_idx").on(t.state),
  ],
);

/** A named list of subnets and ranges a scheduled task scans (a `scan` task names it). */
export const scanPresets = sqliteTable(
  "scan_presets",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    targets: text("targets", { mode: "json" }).$type<string[]>().notNull(),
    ports: text("ports", { mode: "json" }).$type<number[]>().notNull(),
    /** Credential sets tried, in order (empty: every set marked for discovery). */
    credIds: text("cred_ids", { mode: "json" }).$type<number[]>().notNull(),
    adopt: integer("adopt", { mode: "boolean" }).notNull().default(false),
    connectsPerSecond: integer("connects_per_second").notNull().default(50),
    maxConnects: integer("max_connects").notNull().default(20_000),
    ...timestamps,
  },
  (t) => [uniqueIndex("scan_presets_name_unique").on(t.name)],
);

/**
 * A failed login a discovery tried at an address, kept an hour: a device (or candidate address) is tried at most
 * settings collector.discovery_tries_per_hour times per hour, so no account is locked out by guessing sets.
 */
export const discoveryTries = sqliteTable(
  "discovery_tries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    address: text("address").notNull(),
    credId: integer("cred_id"),
    triedAt: timestamp("tried_at").notNull(),
  },
  (t) => [index("discovery_tries_address_idx").on(t.address, t.triedAt)],
);
