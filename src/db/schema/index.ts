export * from "./auth.ts";
export * from "./inventory.ts";
export * from "./devices.ts";
export * from "./activity.ts";
export * from "./jobs.ts";
export * from "./configs.ts";
