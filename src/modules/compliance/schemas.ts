import { z } from "@hono/zod-openapi";

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
