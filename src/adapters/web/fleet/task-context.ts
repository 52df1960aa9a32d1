import type { Context } from "hono";
import type { Links } from "../../../modules/tasks/index.ts";
import type { TaskCtx } from "../../../modules/tasks/index.ts";
import type { WebEnv } from "../env.ts";

/** The URLs inside task records point at the API, as its handlers write them. */
export const taskLinksOf = (c: Context<WebEnv>): Links => ({ base: new URL(c.req.url).origin, version: "v2" });

/** What the task service needs from a page's request: the user's role as its caller. */
export const taskCtxOf = (c: Context<WebEnv>): TaskCtx => ({
  db: c.var.services.db,
  auth: c.var.auth,
  services: c.var.services,
  now: c.var.services.clock.now(),
  links: taskLinksOf(c),
});
