import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../platform/http/env.ts";
import { apiRoute, jsonResponse } from "../../platform/http/route.ts";
import { scanStoredSecrets } from "./storage/secret-history.ts";

const Finding = z
  .object({
    config_id: z.number().int(),
    device_id: z.number().int(),
    device_name: z.string(),
    command: z.string(),
    version: z.number().int(),
    values: z.number().int().openapi({ description: "How many values the generic layer would mask in this version" }),
    rules: z.array(z.string()).openapi({
      description: "The generic rules that found them (keywords, or shape:<name>); never the values",
      example: ["password", "shape:crypt-hash"],
    }),
  })
  .openapi("SecretScanFinding");

export const secretScanRoute = apiRoute({
  method: "get",
  path: "/system/secret-scan",
  operationId: "scanStoredSecrets",
  tag: "System",
  ability: "system.read",
  summary: "Find stored versions that still hold a secret",
  description:
    "Reads every stored configuration version of the devices in the token's scope and reports those where netkeep's generic " +
    "masking layer still finds a value in clear (history stored before today's rules). `svc configs:remask` masks them (docs/configs.md, Secrets). " +
    "Reads every stored text: it takes seconds on a large history.",
  responses: {
    200: jsonResponse(
      z.object({ data: z.object({ versions_scanned: z.number().int(), findings: z.array(Finding) }) }),
      "The versions found, oldest device first; none when the history is clean",
    ),
  },
});

export function registerSecretScanRoute(app: OpenAPIHono<AppEnv>): void {
  app.openapi(secretScanRoute, async (c) =>
    c.json({ data: await scanStoredSecrets(c.var.services.db, c.var.auth.scope) }, 200),
  );
}
