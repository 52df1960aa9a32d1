import { z } from "@hono/zod-openapi";
import { ASSIGNMENT_SCOPES, COMPLIANCE_STATUSES } from "./vocabulary.ts";

// The module's records as the API shows and takes them: the routes (routes.ts) and the resources (resource.ts)
// describe themselves with these; the services answer in these shapes.

export const Policy = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    vendor: z.string().openapi({
      description: "The platform the rules are written for (a hint; evaluation reads the device's own family)",
    }),
    definition: z.string().openapi({ description: "The rules, in rConfig's policy format (docs/compliance.md)" }),
    revision: z
      .string()
      .openapi({ description: "SHA-256 of the definition; each result names the revision it was evaluated against" }),
    rules_count: z.number().int(),
    builtin: z
      .boolean()
      .openapi({ description: "Shipped with netkeep and updated by upgrades: read-only, copy it to customise" }),
    assignments_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Policy");

const EXAMPLE_DEFINITION = [
  "// Description: Telnet must be disabled on the VTY lines",
  "#[must_not_match_regex]",
  "^ transport input .*telnet",
  "",
  "// Description: NTP keeps logs and certificates on time",
  "#[must_match_single_string]",
  "ntp server",
  "",
].join("\n");

export const PolicyInput = z
  .object({
    name: z
      .string()
      .trim()
      .min(1, "must not be empty")
      .max(255, "must be at most 255 characters")
      .openapi({ example: "IOS baseline" }),
    description: z
      .string()
      .max(2000, "must be at most 2000 characters")
      .optional()
      .openapi({ example: "What our auditors check on every IOS router" }),
    vendor: z.string().max(100, "must be at most 100 characters").optional().openapi({ example: "Cisco IOS" }),
    definition: z.string().min(1, "must not be empty").max(500_000, "must be at most 500000 characters").openapi({
      description: "rConfig's policy text; checked on every write (a problem is a 422 naming its line)",
      example: EXAMPLE_DEFINITION,
    }),
  })
  .openapi("PolicyInput");

export const Assignment = z
  .object({
    id: z.number().int(),
    policy_id: z.number().int(),
    policy_name: z.string(),
    description: z.string(),
    scope: z
      .enum(ASSIGNMENT_SCOPES)
      .openapi({ description: "Which list names the devices covered: devices, categories, tags, or all devices" }),
    devices: z.array(z.number().int()),
    categories: z.array(z.number().int()),
    tags: z.array(z.number().int()),
    command: z.string().nullable().openapi({
      description: "The command whose latest configuration is checked; null: each device's configuration command",
    }),
    enabled: z.boolean(),
    run_on_backup: z.boolean().openapi({ description: "Evaluate after every download that stores a new version" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("PolicyAssignment");

const ids = (what: string) =>
  z
    .array(
      z
        .number({ error: `must hold ${what} ids` })
        .int("must hold whole numbers")
        .positive("must hold positive ids"),
    )
    .max(10_000, "must have at most 10000 items")
    .optional();

export const AssignmentInput = z
  .object({
    policy_id: z
      .number({ error: "must be a policy id" })
      .int("must be a whole number")
      .positive("must be a positive id")
      .openapi({ example: 1 }),
    description: z
      .string()
      .max(1000, "must be at most 1000 characters")
      .optional()
      .openapi({ example: "Every core router" }),
    scope: z.enum(ASSIGNMENT_SCOPES, { error: `must be one of: ${ASSIGNMENT_SCOPES.join(", ")}` }).openapi({
      description: "devices, categories or tags (the matching list must name at least one), or all devices",
      example: "tags",
    }),
    devices: ids("device").openapi({ description: "Device ids (scope devices)", example: [] }),
    categories: ids("category").openapi({ description: "Category ids (scope categories)", example: [] }),
    tags: ids("tag").openapi({ description: "Tag ids (scope tags)", example: [3] }),
    command: z
      .string()
      .trim()
      .min(1, "must not be empty")
      .max(255, "must be at most 255 characters")
      .nullable()
      .optional()
      .openapi({
        description: "Command whose configuration is checked; left out or null: each device's configuration command",
        example: "show running-config",
      }),
    enabled: z.boolean().optional().openapi({ example: true }),
    run_on_backup: z.boolean().optional().openapi({ description: "Default true", example: true }),
  })
  .openapi("PolicyAssignmentInput");

const Evidence = z.object({ line: z.number().int().nullable(), text: z.string(), section: z.string().optional() });

const RuleResult = z
  .object({
    index: z.number().int(),
    description: z.string(),
    method: z.string(),
    passed: z.boolean(),
    evidence: z.array(Evidence).openapi({
      description:
        "Matching or offending lines with their line numbers (1-based), or the lines that are missing (line null)",
    }),
    omitted: z.number().int().optional().openapi({ description: "Evidence entries left out past the per-rule cap" }),
    sections_checked: z
      .number()
      .int()
      .optional()
      .openapi({ description: "For a section rule: how many sections it was checked in" }),
    sections: z
      .array(z.object({ line: z.number().int(), header: z.string() }))
      .optional()
      .openapi({ description: "For a section rule: the sections that break it, by header line and its line number" }),
    remediation: z
      .array(z.string())
      .nullable()
      .openapi({ description: "Lines that would fix a failed rule when the fix is deterministic, else null" }),
  })
  .openapi("ComplianceRuleResult");

export const ComplianceResult = z
  .object({
    id: z.number().int(),
    assignment_id: z.number().int(),
    policy_id: z.number().int(),
    policy_name: z.string(),
    device_id: z.number().int(),
    device_name: z.string(),
    command: z.string(),
    config_id: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The configuration version evaluated; null when none was stored" }),
    config_version: z.number().int().nullable(),
    policy_revision: z.string().openapi({ description: "The policy's revision (SHA-256 of its definition) evaluated" }),
    status: z.enum(COMPLIANCE_STATUSES),
    score: z.number().int().openapi({ description: "0-100: the share of rules passed" }),
    passed_rules: z.number().int(),
    total_rules: z.number().int(),
    rules: z.array(RuleResult),
    evaluated_at: z.string(),
  })
  .openapi("ComplianceResult");

export const DeviceCompliance = z
  .object({
    device_id: z.number().int(),
    device_name: z.string(),
    status: z.enum(COMPLIANCE_STATUSES).nullable().openapi({
      description: "not_compliant if any current result is; compliant if all are; null before any evaluation",
    }),
    assignments: z.array(
      z.object({
        assignment_id: z.number().int(),
        policy_id: z.number().int(),
        policy_name: z.string(),
        covers_device: z
          .boolean()
          .openapi({ description: "false: the assignment evaluated the device before but no longer covers it" }),
        status: z.enum(COMPLIANCE_STATUSES).nullable(),
        score: z.number().int().nullable(),
        result: ComplianceResult.nullable(),
      }),
    ),
  })
  .openapi("DeviceCompliance");

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export const TrendsQuery = z.object({
  policy_id: z.coerce
    .number({ error: "must be a policy id" })
    .int("must be a whole number")
    .positive("must be a positive id")
    .optional()
    .openapi({
      description:
        "Only this policy's results (left out: every policy; a device counts as compliant when all its current results are)",
      example: 1,
    }),
  from: z.string().regex(DATE, "must be a date such as 2026-06-01").optional().openapi({
    description: "First day (UTC); default: 29 days (day) or 11 weeks (week) before `to`",
    example: "2026-05-01",
  }),
  to: z
    .string()
    .regex(DATE, "must be a date such as 2026-06-30")
    .optional()
    .openapi({ description: "Last day (UTC), included; default today", example: "2026-05-31" }),
  group_by: z
    .enum(["day", "week"], { error: "must be day or week" })
    .optional()
    .openapi({ description: "Period length (default day); weeks are 7 days from `from`", example: "day" }),
});

const FailingRule = z.object({
  policy_id: z.number().int(),
  rule: z.number().int(),
  description: z.string(),
  devices: z.number().int(),
});

const Period = z.object({
  period_start: z.string(),
  period_end: z.string().openapi({ description: "Exclusive: the state shown is the fleet's just before this instant" }),
  devices: z.number().int().openapi({ description: "Devices with a result by the period's end" }),
  compliant: z.number().int(),
  not_compliant: z.number().int(),
  not_evaluated: z.number().int(),
  compliant_percent: z.number().nullable().openapi({
    description: "compliant / (compliant + not_compliant) x 100, one decimal; null when none was evaluated",
  }),
  failing_rules: z
    .array(FailingRule)
    .openapi({ description: "Rules failing on at least one device at the period's end, most devices first" }),
});

export const Trends = z
  .object({
    policy_id: z.number().int().nullable(),
    group_by: z.enum(["day", "week"]),
    from: z.string(),
    to: z.string(),
    periods: z.array(Period),
  })
  .openapi("ComplianceTrends");
