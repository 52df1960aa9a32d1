import type { ApiVersion } from "../api/versions.ts";

export type ApiDocsFileInfo = { sizeBytes: number; modifiedAt: Date };

/**
 * Read access to the generated `docs.md` of each API version. src/ runs on Web APIs only, so the launchers pass
 * a filesystem-backed implementation (src/runtime/api-docs-files.ts) through createApp.
 */
export interface ApiDocsFiles {
  /** Size and last-generated time, or null when the file has not been generated. */
  stat(version: ApiVersion): Promise<ApiDocsFileInfo | null>;
  /** The Markdown, or null when the file has not been generated. */
  read(version: ApiVersion): Promise<string | null>;
}

/** The command that writes a version's file, exactly as an operator types it from the application root. */
export const generateCommand = (version: ApiVersion | "all") =>
  `npm run svc:api-docs:build -- --api-version=${version}`;

/** `netkeep-api-v1-docs.md`, with the service name from APP_NAME reduced to a safe file-name slug. */
export function downloadFilename(appName: string, version: ApiVersion): string {
  const slug =
    appName
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "") || "api";
  return `${slug}-api-${version}-docs.md`;
}
