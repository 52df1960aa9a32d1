import type { Context } from "hono";
import type { DeployActor } from "../../../modules/snippets/index.ts";
import type { WebEnv } from "../env.ts";

/** What the deploy services need from a page's request: the logged-in user as the caller. */
export const deployActorOf = (c: Context<WebEnv>): DeployActor => ({
  db: c.var.services.db,
  auth: c.var.auth,
  now: c.var.services.clock.now(),
  jobsQueued: c.var.services.jobsQueued,
});
