/**
 * The rConfig compatibility layer: one place that knows rConfig's API (docs/rconfig.md has the route table).
 * Its hooks, by operationId, rewrite rConfig's request shapes before validation and add rConfig's answer fields
 * beside netkeep's (never replacing them, but where a route's docs say a field could not be both); routes.ts
 * serves rConfig's paths that netkeep has no route of its own for. Modules never special-case rConfig.
 */
import type { RouteHooks } from "../../../platform/http/route-hooks.ts";
import { configHooks } from "./configs.ts";
import { deviceHooks } from "./devices.ts";
import { masterDataHooks } from "./master.ts";
import { searchHooks } from "./search.ts";
import { taskHooks } from "./tasks.ts";

/** Registers every rConfig hook with the route builder's registry (src/adapters/api/versions.ts, when the API is assembled). */
export function registerRconfigHooks(hooks: RouteHooks): void {
  for (const group of [deviceHooks, configHooks, searchHooks, masterDataHooks, taskHooks]) hooks.register(group);
}
