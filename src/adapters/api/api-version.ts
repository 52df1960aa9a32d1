/** The API versions netkeep serves, each under /api/<version> (versions.ts assembles them). */
export const API_VERSIONS = ["v1", "v2"] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];
