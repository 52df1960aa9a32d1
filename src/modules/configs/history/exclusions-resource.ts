import { z } from "@hono/zod-openapi";
import { inArray, isNull, or, sql } from "drizzle-orm";
import { EVERY_DEVICE } from "../../../platform/auth/scope.ts";
import { compareExclusions } from "../../../db/schema/index.ts";
import { booleanFilter, idFilter } from "../../../platform/http/filters.ts";
import { containsText } from "../../../platform/http/list.ts";
import { defineResource } from "../../../platform/http/resource.ts";
import { MAX_PATTERN_LENGTH } from "../../../kernel/patterns/user-pattern.ts";
import { patternProblem } from "./exclusions.ts";

const CompareExclusion = z
  .object({
    id: z.number().int(),
    pattern: z.string(),
    command: z.string().nullable(),
    ignore_case: z.boolean(),
    description: z.string(),
    enabled: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("CompareExclusion");

const CompareExclusionInput = z
  .object({
    pattern: z
      .string()
      .min(1, "must not be empty")
      .max(MAX_PATTERN_LENGTH, `must be at most ${MAX_PATTERN_LENGTH} characters`)
      .openapi({
        description:
          "A regular expression tested against each line: RE2 syntax, written as for JavaScript (docs/patterns.md)",
        example: "^! Last configuration change at ",
      }),
    command: z
      .string()
      .trim()
      .min(1, "must not be empty (send null for every command)")
      .max(255, "must be at most 255 characters")
      .nullable()
      .optional()
      .openapi({
        description: "Only this command's output (exact); null or absent: every command",
        example: "show running-config",
      }),
    ignore_case: z
      .boolean({ error: "must be true or false" })
      .optional()
      .openapi({ description: "Match regardless of letter case (default false)" }),
    description: z
      .string()
      .max(1000, "must be at most 1000 characters")
      .optional()
      .openapi({ example: "IOS change timestamp" }),
    enabled: z
      .boolean({ error: "must be true or false" })
      .optional()
      .openapi({ description: "Disabled rules are kept but not applied (default true)" }),
  })
  .openapi("CompareExclusionInput");

type Row = typeof compareExclusions.$inferSelect;

export const compareExclusionsResource = defineResource({
  tag: "Compare exclusions",
  path: "/compare-exclusions",
  singular: "compare exclusion",
  plural: "compare exclusions",
  resource: "configs",
  table: compareExclusions,
  output: CompareExclusion,
  input: CompareExclusionInput,
  listSpec: {
    fields: Object.keys(CompareExclusion.shape),
    filters: {
      id: idFilter(compareExclusions.id, "id", "Rule id"),
      command: {
        describe: "Rules that apply to this command: its own and the global ones",
        build: (v) => or(isNull(compareExclusions.command), inArray(compareExclusions.command, v))!,
      },
      enabled: booleanFilter(compareExclusions.enabled, "enabled"),
    },
    sorts: {
      id: compareExclusions.id,
      command: compareExclusions.command,
      created_at: compareExclusions.createdAt,
      updated_at: compareExclusions.updatedAt,
    },
    defaultSort: "id",
    idColumn: compareExclusions.id,
    search: {
      describe: "Substring of the pattern or description",
      build: (term) =>
        sql`(${containsText(compareExclusions.pattern, term)} or ${containsText(compareExclusions.description, term)})`,
    },
  },
  // A rule applies to every device's downloads (a command's rule to every device that runs it): only a role that
  // sees all devices may make, change or delete one.
  reaches: async () => EVERY_DEVICE,
  async serialize(_db, rows) {
    return (rows as Row[]).map((r) => ({
      id: r.id,
      pattern: r.pattern,
      command: r.command,
      ignore_case: r.ignoreCase,
      description: r.description,
      enabled: r.enabled,
      created_at: r.createdAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
    }));
  },
  async toValues(input, existing, ctx) {
    const current = existing as Row | null;
    // The schema requires a pattern except in a patch, where the stored one is checked again with the new flags.
    const pattern = input.pattern ?? current?.pattern ?? "";
    const ignoreCase = input.ignore_case ?? (ctx.mode === "patch" ? current?.ignoreCase : undefined) ?? false;
    const problem = patternProblem(pattern, ignoreCase);
    if (problem) ctx.bag.add("pattern", problem);
    const defaults = ctx.mode === "patch" ? {} : { command: null, ignoreCase: false, description: "", enabled: true };
    const values = {
      pattern: input.pattern,
      command: input.command,
      ignoreCase: input.ignore_case,
      description: input.description,
      enabled: input.enabled,
    };
    return { ...defaults, ...Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) };
  },
  descriptions: {
    create:
      "A rule leaves the lines it matches out when a download is compared with the latest stored version, so a change in them alone makes no new version; " +
      "diffs leave them out when asked (exclusions=true). Stored versions are never rewritten. Patterns run in RE2, which matches in time " +
      `linear in the line: written as for JavaScript, of at most ${MAX_PATTERN_LENGTH} characters, without control characters; lookaround and ` +
      "backreferences, which RE2 lacks, and invalid patterns are a 422 saying why (docs/patterns.md).",
  },
});
