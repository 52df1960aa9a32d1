import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { nameKeyColumn } from "../name-key.ts";
import { timestamp, timestamps } from "./columns.ts";
import { configs } from "./configs.ts";
import { devices } from "./devices.ts";

/**
 * Compliance policies: a definition in rConfig's text format (src/modules/compliance/engine/), checked on every
 * write. Built-ins are seeded from the engine's definition files and read-only; copy one to change it.
 */
export const policies = sqliteTable(
  "policies",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    nameKey: nameKeyColumn("name_key"),
    description: text("description").notNull().default(""),
    /** Which platform the rules are written for ("Cisco IOS"); a hint for people, evaluation does not read it. */
    vendor: text("vendor").notNull().default(""),
    definition: text("definition").notNull(),
    /** SHA-256 of the definition: a result names the revision it was evaluated against, so an edit re-evaluates. */
    definitionHash: text("definition_hash").notNull(),
    /** The built-in's key (its definition file's name); null for a user's policy. */
    builtinKey: text("builtin_key"),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("policies_name_key_unique").on(t.nameKey),
    uniqueIndex("policies_builtin_key_unique").on(t.builtinKey),
  ],
);

/** Which devices an assignment covers: those listed, those in the categories, those carrying the tags, or all. */
export const ASSIGNMENT_SCOPES = ["devices", "categories", "tags", "all"] as const;
export type AssignmentScope = (typeof ASSIGNMENT_SCOPES)[number];

/** A policy applied to a set of devices, against one command's latest configuration. */
export const policyAssignments = sqliteTable(
  "policy_assignments",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    policyId: integer("policy_id")
      .notNull()
      .references(() => policies.id, { onDelete: "cascade" }),
    description: text("description").notNull().default(""),
    scope: text("scope", { enum: ASSIGNMENT_SCOPES }).notNull(),
    /** Ids for the scope in use (the others stay empty); ids of records deleted since match nothing. */
    deviceIds: text("device_ids", { mode: "json" }).$type<number[]>().notNull().default(sql`'[]'`),
    categoryIds: text("category_ids", { mode: "json" }).$type<number[]>().notNull().default(sql`'[]'`),
    tagIds: text("tag_ids", { mode: "json" }).$type<number[]>().notNull().default(sql`'[]'`),
    /** Null: each device's configuration command (the first its category runs, else its template's first). */
    command: text("command"),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    /** Evaluate after every download that stores a new version of the command. */
    runOnBackup: integer("run_on_backup", { mode: "boolean" }).notNull().default(true),
    ...timestamps,
  },
  (t) => [index("policy_assignments_policy_idx").on(t.policyId)],
);

export const COMPLIANCE_STATUSES = ["compliant", "not_compliant", "not_evaluated"] as const;
export type ComplianceStatus = (typeof COMPLIANCE_STATUSES)[number];

/**
 * One evaluation of an assignment's policy on one device's configuration version. Unique per (assignment,
 * device, version, policy revision): evaluating the same version against an unchanged policy adds nothing, so the
 * history holds only what changed. not_evaluated (no configuration stored) has no version.
 */
export const complianceResults = sqliteTable(
  "compliance_results",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    assignmentId: integer("assignment_id")
      .notNull()
      .references(() => policyAssignments.id, { onDelete: "cascade" }),
    /** The assignment's policy, kept here for filters and trends. */
    policyId: integer("policy_id")
      .notNull()
      .references(() => policies.id, { onDelete: "cascade" }),
    deviceId: integer("device_id")
      .notNull()
      .references(() => devices.id, { onDelete: "cascade" }),
    command: text("command").notNull(),
    /** No foreign key: the result is history and outlives a version the retention purge deletes. */
    configId: integer("config_id"),
    configVersion: integer("config_version"),
    policyHash: text("policy_hash").notNull(),
    status: text("status", { enum: COMPLIANCE_STATUSES }).notNull(),
    /** 0-100: the share of rules passed (0 when not evaluated). */
    score: integer("score").notNull(),
    passedRules: integer("passed_rules").notNull(),
    totalRules: integer("total_rules").notNull(),
    /**
     * Per rule, what this evaluation found (passed, evidence, remediation, offending sections), in the compact form of
     * src/modules/compliance/stored-rules.ts; what every result of the revision shares is in policy_revisions.
     */
    rules: text("rules", { mode: "json" }).$type<unknown[]>().notNull(),
    evaluatedAt: timestamp("evaluated_at").notNull(),
  },
  (t) => [
    // Two partial indexes, as NULLs never clash in one: a version's result, and "no version" (not_evaluated).
    uniqueIndex("compliance_results_version_unique")
      .on(t.assignmentId, t.deviceId, t.configId, t.policyHash)
      .where(sql`${t.configId} is not null`),
    uniqueIndex("compliance_results_unevaluated_unique")
      .on(t.assignmentId, t.deviceId, t.policyHash)
      .where(sql`${t.configId} is null`),
    index("compliance_results_device_idx").on(t.deviceId, t.assignmentId, t.evaluatedAt),
    index("compliance_results_policy_idx").on(t.policyId, t.evaluatedAt),
    index("compliance_results_evaluated_idx").on(t.evaluatedAt),
  ],
);

/**
 * Each (assignment, device) pair's current result: its newest (by evaluated_at, then id), the device's state under
 * the assignment. Kept by triggers on compliance_results (migration compliance_current_triggers) whatever writes
 * or deletes a result, so `filter[latest]`, a device's compliance and a scoped trend's starting state read one row
 * a pair instead of comparing every result with its pair's others (src/modules/compliance/current.ts).
 */
export const complianceCurrent = sqliteTable(
  "compliance_current",
  {
    deviceId: integer("device_id").notNull(),
    assignmentId: integer("assignment_id").notNull(),
    resultId: integer("result_id").notNull(),
    evaluatedAt: timestamp("evaluated_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.deviceId, t.assignmentId] }),
    uniqueIndex("compliance_current_result_idx").on(t.resultId),
  ],
);

/** A rule of a policy revision as its results share it: position, description and method. */
export type RevisionRule = { index: number; description: string; method: string };

/**
 * What every result of one policy revision shares, stored once: each rule's description and method. Keyed by the
 * revision (the definition's SHA-256, compliance_results.policy_hash); kept for good, a few KB a revision.
 */
export const policyRevisions = sqliteTable("policy_revisions", {
  hash: text("hash").primaryKey(),
  rules: text("rules", { mode: "json" }).$type<RevisionRule[]>().notNull(),
});

/**
 * The fleet's compliance at the end of each finished day (UTC), per policy and for all policies (policy_id 0), as
 * the trends read it (src/modules/compliance/daily.ts): computed once per day from the results, so a trend reads
 * days instead of every result. Triggers (migration 0030) delete the days a result written or deleted later
 * changes (those ending after its evaluated_at), and they are computed again when asked.
 */
export const complianceDays = sqliteTable(
  "compliance_days",
  {
    /** The instant the day ends (the next day's midnight, UTC, epoch ms). */
    dayEnd: integer("day_end").notNull(),
    /** 0: every policy (a device is not compliant when any of its current results is). */
    policyId: integer("policy_id").notNull(),
    devices: integer("devices").notNull(),
    compliant: integer("compliant").notNull(),
    notCompliant: integer("not_compliant").notNull(),
    notEvaluated: integer("not_evaluated").notNull(),
    /** Per policy: [rule index, devices failing it, its description]; empty for policy_id 0. */
    failingRules: text("failing_rules", { mode: "json" }).$type<[number, number, string][]>().notNull(),
  },
  (t) => [primaryKey({ columns: [t.dayEnd, t.policyId] })],
);

/**
 * Versions stored while some assignment evaluates on backup, not yet evaluated. Storing a version only queues it
 * (as for the search index): the collector evaluates the queue off the download path (collector/compliance-pass.ts).
 */
export const compliancePending = sqliteTable("compliance_pending", {
  configId: integer("config_id")
    .primaryKey()
    .references(() => configs.id, { onDelete: "cascade" }),
  deviceId: integer("device_id").notNull(),
  command: text("command").notNull(),
});
