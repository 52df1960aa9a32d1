import { Hono } from "hono";
import { openApiDocument, type ApiVersion } from "../api/versions.ts";
import type { Clock } from "../../kernel/clock.ts";
import type { Config } from "../../kernel/config.ts";
import { isBusy } from "../../db/write-turns.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { failureReason, isDiskFull } from "../../kernel/error-reason.ts";
import { createLoginThrottle } from "../../platform/auth/login-throttle.ts";
import { asOpenApiDocument } from "../docs/openapi.ts";
import { describeApi, type ApiReference } from "../docs/reference.ts";
import type { ApiDocsFiles } from "./api-docs-files.ts";
import { registerAssets } from "./assets.ts";
import { registerVendorAssets } from "./vendor-assets.ts";
import type { WebEnv, WebServices } from "./env.ts";
import { requireAdminSession, requireCsrf } from "./guard.ts";
import { renderProblem } from "./layout.tsx";
import { registerLoginRoutes } from "./login.tsx";
import { registerSecondFactorRoutes } from "./second-factor.tsx";
import { registerAccountPages } from "./account/routes.ts";
import { registerUserAdminPage } from "./admin/users.tsx";
import { registerDashboardPage } from "./dashboard.tsx";
import { registerChangesPage } from "./fleet/changes.tsx";
import { registerConfigPage } from "./fleet/config.tsx";
import { registerConfigDeletePages } from "./configs/delete.tsx";
import { registerRetentionPages } from "./configs/retention.tsx";
import { registerHostKeyPages } from "./fleet/host-key.tsx";
import { registerSearchPage } from "./fleet/search.tsx";
import { registerTaskPages } from "./fleet/tasks.tsx";
import { registerTaskFormPages } from "./fleet/task-form.tsx";
import { registerTaskDeletePages } from "./tasks/delete.tsx";
import { registerDevicePage } from "./fleet/device.tsx";
import { registerDiffPage } from "./fleet/diff.tsx";
import { registerDevicesPage } from "./fleet/devices.tsx";
import { registerDeviceFormPages } from "./fleet/device-form.tsx";
import { registerDeviceImportPage } from "./fleet/device-import.tsx";
import { registerDiscoveryPage } from "./discovery/page.tsx";
import { registerAiAgentDocsRoutes } from "./settings/ai-agent-docs.tsx";
import { registerRestApiPage } from "./settings/page.tsx";
import { registerSettingsOverviewPage } from "./settings/overview.tsx";
import { registerCredentialPages } from "./inventory/credentials.tsx";
import { registerInventoryPages } from "./inventory/pages.tsx";
import { registerTemplatePages } from "./inventory/templates.tsx";
import { registerCompareExclusionPages } from "./inventory/compare-exclusions.tsx";
import { registerSystemPage } from "./system/page.tsx";
import { registerZonePages } from "./system/zones.tsx";
import { registerMailPage } from "./webhooks/mail.tsx";
import { registerTokensPage } from "./tokens/page.tsx";
import { registerCompliancePage } from "./compliance/page.tsx";
import { registerComplianceForms } from "./compliance/policy-form.tsx";
import { registerComplianceResultPage } from "./compliance/result.tsx";
import { registerAssignmentEditPages } from "./compliance/assignment-edit.tsx";
import { registerSnippetsPage } from "./snippets/page.tsx";
import { registerSnippetForms } from "./snippets/form.tsx";
import { registerSnippetDeployPages } from "./snippets/deploy.tsx";
import { registerDeploymentPages } from "./snippets/deployment.tsx";
import { registerWebhooksPage } from "./webhooks/page.tsx";
import { viewerAuth } from "./viewer.ts";
import { registerActivityPage } from "./activity.tsx";
import { registerReportsPage } from "./reports.tsx";

/**
 * The server-rendered web interface: login/logout, the fleet pages (dashboard, devices, configurations and diffs,
 * changes, search, tasks, users), and Settings -> REST API Access for administrators. It knows sessions only
 * (cookies); the API under /api knows tokens only. Neither accepts the other's credential.
 */
export function createWebApp(deps: { config: Config; clock: Clock; apiDocsFiles?: ApiDocsFiles }): Hono<WebEnv> {
  const references = new Map<ApiVersion, ApiReference>();
  const web: WebServices = {
    apiDocsFiles: deps.apiDocsFiles,
    reference(version) {
      let reference = references.get(version);
      if (!reference) {
        reference = describeApi(
          asOpenApiDocument(openApiDocument(version, deps.config.appUrl, deps.config.appName), version),
        );
        references.set(version, reference);
      }
      return reference;
    },
  };
  const app = new Hono<WebEnv>();
  registerAssets(app);
  registerVendorAssets(app);
  const loginThrottle = createLoginThrottle(deps.clock);
  registerLoginRoutes(app, loginThrottle);
  registerSecondFactorRoutes(app, loginThrottle);
  registerDashboardPage(app);
  registerDevicesPage(app);
  registerDeviceImportPage(app);
  registerDiscoveryPage(app);
  registerDeviceFormPages(app);
  registerDevicePage(app);
  registerDiffPage(app);
  // Before the version page, whose /configs/{id} would take /configs/retention, /purge and /export as ids.
  registerRetentionPages(app);
  registerConfigDeletePages(app);
  registerHostKeyPages(app);
  registerConfigPage(app);
  registerChangesPage(app);
  registerSearchPage(app);
  registerTaskFormPages(app);
  registerTaskDeletePages(app);
  registerTaskPages(app);
  registerUserAdminPage(app);
  registerCredentialPages(app);
  registerInventoryPages(app);
  registerTemplatePages(app);
  registerCompareExclusionPages(app);
  registerSystemPage(app);
  registerZonePages(app);
  registerMailPage(app);
  registerTokensPage(app);
  registerSettingsOverviewPage(app);
  registerCompliancePage(app);
  registerComplianceForms(app);
  registerComplianceResultPage(app);
  registerAssignmentEditPages(app);
  registerSnippetsPage(app);
  registerSnippetForms(app);
  registerDeploymentPages(app);
  registerSnippetDeployPages(app);
  registerWebhooksPage(app);
  registerActivityPage(app);
  registerReportsPage(app);
  registerAccountPages(app);
  app.use(
    "/settings/restapi/*",
    async (c, next) => {
      c.set("web", web);
      await next();
    },
    requireAdminSession(),
    async (c, next) => {
      // The menu shows what this user's role opens.
      c.set("auth", await viewerAuth(c, c.var.session));
      await next();
    },
    requireCsrf(),
  );
  registerRestApiPage(app);
  registerAiAgentDocsRoutes(app);
  app.onError((thrown, c) => {
    // A full disk refuses the page's write as it refuses the API's: said as one, never as a server error.
    const err = isDiskFull(thrown) ? ApiError.diskFull("The page") : thrown;
    if (err !== thrown)
      c.var.services.logger.error("the disk is full; answered 507", {
        method: c.req.method,
        path: c.req.path,
        error: failureReason(thrown),
      });
    // A page calls the API's services, so it meets their refusals: shown as the API would answer them.
    if (err instanceof ApiError) {
      for (const [name, value] of Object.entries(err.headers ?? {})) c.header(name, value);
      const problems = Object.values(err.errors ?? {}).flat();
      return renderProblem(
        c,
        err.status,
        {
          title:
            err.status === 404
              ? "Not found"
              : err.status === 422
                ? "Check the request"
                : err.status === 507
                  ? "The disk is full"
                  : "Refused",
          // Every problem of a 422, not only the first the API's message names.
          message: problems.length > 1 ? problems.join("; ") : err.message,
          // A bad query string: the same page without it; anything else: the start.
          next:
            err.status === 422 && c.req.method === "GET"
              ? { href: c.req.path, label: "Start over" }
              : { href: "/", label: "Back to the start" },
        },
        c.get("session"),
      );
    }
    if (isBusy(err)) {
      c.header("Retry-After", "5");
      return renderProblem(c, 503, {
        title: "The database is busy",
        message:
          "Another writer (a collector or maintenance) kept the database busy; nothing was changed. Try again in a few seconds.",
        // A form's address may take no GET: after one, start again from the front page.
        next: c.req.method === "GET" ? { href: c.req.path, label: "Try again" } : { href: "/", label: "Start again" },
      });
    }
    c.var.services.logger.error("web page failed", {
      method: c.req.method,
      path: c.req.path,
      error: String(err),
      stack: (err as Error).stack,
    });
    return renderProblem(c, 500, {
      title: "Something went wrong",
      message: "The page failed unexpectedly; nothing more is shown here. The server log has the details.",
      next: { href: "/", label: "Start again" },
    });
  });
  return app;
}
