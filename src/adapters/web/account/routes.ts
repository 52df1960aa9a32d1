import type { Hono } from "hono";
import type { WebEnv } from "../env.ts";
import { requireAccountSession } from "./guard.ts";
import { registerAccountOverview } from "./overview.tsx";
import { registerPasswordPage } from "./password.tsx";
import { registerSessionsPage } from "./sessions.tsx";
import { registerTwoFactorPage } from "./two-factor.tsx";

/** Your own account: pages for any signed-in user, about themselves only. */
export function registerAccountPages(web: Hono<WebEnv>): void {
  web.use("/account", requireAccountSession());
  web.use("/account/*", requireAccountSession());
  registerAccountOverview(web);
  registerPasswordPage(web);
  registerSessionsPage(web);
  registerTwoFactorPage(web);
}
