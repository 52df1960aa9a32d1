import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../platform/http/env.ts";
import { hookRoutes, SECURITY_SCHEME } from "../../platform/http/route.ts";
import { RouteHooks } from "../../platform/http/route-hooks.ts";
import { validationHook } from "../../platform/http/validation.ts";
import { registerDeviceRoutes } from "../../modules/devices/index.ts";
import { registerDiscoveryRoutes } from "../../modules/discovery/index.ts";
import { registerJobRoutes } from "../../modules/jobs/index.ts";
import { tagsResource } from "../../modules/tags/index.ts";
import { vendorsResource } from "../../modules/vendors/index.ts";
import { credentialsResource } from "../../modules/credentials/index.ts";
import { registerUserRoutes } from "../../modules/users/index.ts";
import { rolesResource } from "../../modules/roles/index.ts";
import { registerActivityRoutes } from "../../modules/activity/index.ts";
import { registerTemplateRoutes } from "../../modules/templates/index.ts";
import { categoriesResource } from "../../modules/categories/index.ts";
import { commandsResource } from "../../modules/commands/index.ts";
import { deviceProfilesResource } from "../../modules/device-profiles/index.ts";
import { registerConfigSearchRoutes } from "../../modules/configs/index.ts";
import { registerRetentionRoutes } from "../../modules/configs/index.ts";
import { registerTaskRoutes } from "../../modules/tasks/index.ts";
import { registerConfigGroups } from "../../modules/configs/index.ts";
import { registerComplianceExportRoute, registerComplianceRoutes } from "../../modules/compliance/index.ts";
import { registerSnippetRoutes } from "../../modules/snippets/index.ts";
import { registerSystemRoutes } from "../../modules/system/index.ts";
import { registerSecretScanRoute } from "../../modules/configs/index.ts";
import { registerDashboardRoutes } from "../../modules/dashboard/index.ts";
import { registerSettingsRoutes } from "../../modules/settings/index.ts";
import { registerMailRoutes, registerMailTestRoute } from "../../modules/mail/index.ts";
import { registerBackupRoutes } from "../../modules/backups/index.ts";
import { registerReportRoutes } from "../../modules/reports/index.ts";
import { registerRconfigRoutes } from "../compat/rconfig/routes.ts";
import { registerRconfigHooks } from "../compat/rconfig/index.ts";
import { payloadSchemaName, registerWebhookRoutes } from "../../modules/webhooks/index.ts";
import { EVENT_CATALOGUE } from "../../platform/outbox/catalogue.ts";
import { TAG_DESCRIPTIONS } from "./tags.ts";
import { registerZoneRoutes } from "../../modules/zones/index.ts";
import type { ApiVersion } from "./api-version.ts";

export { API_VERSIONS } from "./api-version.ts";
export type { ApiVersion } from "./api-version.ts";

/** The adapters' route hooks: the rConfig layer's, by operationId. */
function routeHooks(): RouteHooks {
  const hooks = new RouteHooks();
  registerRconfigHooks(hooks);
  return hooks;
}

function versionApp(version: ApiVersion): OpenAPIHono<AppEnv> {
  const api = new OpenAPIHono<AppEnv>({ defaultHook: validationHook }).basePath(`/api/${version}`);
  hookRoutes(api, routeHooks());
  api.openAPIRegistry.registerComponent("securitySchemes", SECURITY_SCHEME, {
    type: "apiKey",
    in: "header",
    name: "apitoken",
    description: "An API token; also accepted as the apitoken query parameter. Authorization: Bearer is not accepted.",
  });
  return api;
}

/** Which module routes v1 mounts. */
export function createV1Api(): OpenAPIHono<AppEnv> {
  const api = versionApp("v1");
  registerDiscoveryRoutes(api);
  registerDeviceRoutes(api, { summary: false });
  // Before any /configs/{id} route: static /configs/... paths must win over the id parameter (Hono tries routes in
  // registration order; route-order.test.ts fails on a fixed path registered after a parameter route that takes it).
  for (const register of [registerConfigSearchRoutes, registerRetentionRoutes]) register(api);
  registerJobRoutes(api);
  for (const group of [vendorsResource, tagsResource]) group.register(api);
  credentialsResource.register(api);
  registerUserRoutes(api);
  rolesResource.register(api);
  registerActivityRoutes(api);
  registerTemplateRoutes(api);
  for (const group of [categoriesResource, commandsResource, deviceProfilesResource]) group.register(api);
  registerTaskRoutes(api);
  registerComplianceRoutes(api);
  registerSnippetRoutes(api);
  registerSystemRoutes(api, { rconfigPath: "v1" });
  registerSecretScanRoute(api);
  registerDashboardRoutes(api);
  registerSettingsRoutes(api);
  registerMailRoutes(api);
  registerMailTestRoute(api);
  registerBackupRoutes(api);
  registerReportRoutes(api);
  registerRconfigRoutes(api, "v1");
  registerWebhookRoutes(api);
  registerZoneRoutes(api);
  // After any other static /configs/... routes (search, retention): /configs/{id} would take their paths as ids.
  registerConfigGroups(api, { changes: false });
  return api;
}

/** v2 is a superset of v1 for the groups it has. */
export function createV2Api(): OpenAPIHono<AppEnv> {
  const api = versionApp("v2");
  registerDeviceRoutes(api, { summary: true });
  // Before any /configs/{id} route: static /configs/... paths must win over the id parameter (Hono tries routes in
  // registration order; route-order.test.ts fails on a fixed path registered after a parameter route that takes it).
  for (const register of [registerConfigSearchRoutes, registerRetentionRoutes]) register(api);
  registerUserRoutes(api);
  registerMailRoutes(api);
  // The export before /policy-compliance/{id}, which would take "export" as an id.
  registerComplianceExportRoute(api);
  registerComplianceRoutes(api);
  registerSystemRoutes(api, { rconfigPath: "v2" });
  registerRconfigRoutes(api, "v2");
  registerConfigGroups(api, { changes: true });
  return api;
}

export const createVersionApi = (version: ApiVersion) => (version === "v1" ? createV1Api() : createV2Api());

/**
 * What netkeep POSTs to a webhook subscription, one entry per event type: the Event envelope with the type's
 * payload in data (the components registerWebhookRoutes declares).
 */
function eventWebhooks(): NonNullable<
  ReturnType<ReturnType<typeof createVersionApi>["getOpenAPI31Document"]>["webhooks"]
> {
  return Object.fromEntries(
    Object.entries(EVENT_CATALOGUE).map(([type, def]) => [
      type,
      {
        post: {
          summary: `The ${type} event`,
          description: `${def.describe} Delivered to each subscription whose filters take it, signed the Standard Webhooks way (docs/events.md).`,
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: {
                  allOf: [
                    { $ref: "#/components/schemas/Event" },
                    {
                      type: "object" as const,
                      properties: { data: { $ref: `#/components/schemas/${payloadSchemaName(type)}` } },
                    },
                  ],
                },
              },
            },
          },
          responses: {
            "2XX": { description: "Delivered" },
            "410": { description: "Gone: the subscription is disabled" },
            default: {
              description: "A 5xx or no answer is retried while retries are left; any other answer fails the delivery",
            },
          },
        },
      },
    ]),
  );
}

/** The OpenAPI 3.1 document of one version, straight from the route definitions; every tag it uses is declared. */
export function openApiDocument(version: ApiVersion, appUrl: string, appName = "netkeep") {
  const n = version.slice(1);
  const document = createVersionApi(version).getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: `${appName} REST API v${n}`,
      version: `${n}.0.0`,
      description:
        `Network configuration management: devices, their backed-up configurations and diffs, compliance, snippets and tasks. ` +
        `Send the API token in the apitoken header. rConfig V8 clients work with a base-URL change.`,
      contact: { name: `${appName} administrators`, url: appUrl },
    },
    servers: [{ url: appUrl }],
  });
  const used = new Set(
    Object.values(document.paths ?? {}).flatMap((item) =>
      Object.values(item as Record<string, { tags?: string[] }>).flatMap((operation) => operation?.tags ?? []),
    ),
  );
  if (document.components?.schemas?.Event) document.webhooks = eventWebhooks();
  document.tags = [...used]
    .sort()
    .map((name) => ({ name, ...(TAG_DESCRIPTIONS[name] ? { description: TAG_DESCRIPTIONS[name] } : {}) }));
  return document;
}
