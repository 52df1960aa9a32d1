import { z } from "@hono/zod-openapi";
import { apiRoute, jsonBody, jsonResponse } from "../../platform/http/route.ts";
import { SettingsPatch, SettingsSchema } from "../../platform/settings/schema.ts";

const tag = "Settings";

export const getSettingsRoute = apiRoute({
  method: "get",
  path: "/settings",
  operationId: "getSettings",
  tag,
  ability: "system.read",
  summary: "Show the service's settings",
  description:
    "Every setting with its value in force (defaults filled in). Passwords and secrets are never shown: smtp.has_password, ldap.has_bind_password and oidc.has_client_secret say whether one is stored.",
  responses: { 200: jsonResponse(z.object({ data: SettingsSchema }), "The settings") },
});

export const patchSettingsRoute = apiRoute({
  method: "patch",
  path: "/settings",
  operationId: "updateSettings",
  tag,
  ability: "system.write",
  summary: "Change some settings",
  description:
    "Send only what changes; each section (compare, collector, smtp, webhooks, backups, ldap, oidc, mfa, tokens) is merged field by field (ldap.group_roles and oidc.group_roles are replaced whole). A change applies at once, " +
    "in the API and every collector, without a restart, and is recorded in the activity log (the SMTP password only as changed). " +
    "smtp.password, ldap.bind_password and oidc.client_secret are write-only, stored encrypted under the app key; null removes one. " +
    "Settings apply to every device, so only a user whose role sees all devices may change them (403 otherwise).",
  request: jsonBody(SettingsPatch),
  responses: { 200: jsonResponse(z.object({ data: SettingsSchema }), "The settings after the change") },
});
