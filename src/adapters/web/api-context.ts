import type { Context } from "hono";
import type { AppEnv } from "../../platform/http/env.ts";
import type { WebEnv } from "./env.ts";

/** The API's resource services take the API's context; a page's carries the same services and the same `auth`. */
export const asApi = (c: Context<WebEnv>) => c as unknown as Context<AppEnv>;
