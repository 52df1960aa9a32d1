import type { AppEnv } from "../../platform/http/env.ts";
import type { ApiVersion } from "../api/versions.ts";
import type { WebSession } from "../../platform/auth/sessions.ts";
import type { ApiReference } from "../docs/reference.ts";
import type { ApiDocsFiles } from "./api-docs-files.ts";

/** What the web pages need beyond the app's services, built once per app by createWebApp. */
export type WebServices = {
  /** Absent when the process was started without access to STORAGE_DIR (tests building a bare app). */
  apiDocsFiles: ApiDocsFiles | undefined;
  /**
   * A version's API reference, read from the same OpenAPI document the Markdown generator uses; built on first
   * use and kept, since the route table does not change at run time.
   */
  reference(version: ApiVersion): ApiReference;
};

/** Web routes see the app's services plus the web services and, behind the guard, the logged-in session. */
export type WebEnv = {
  Variables: AppEnv["Variables"] & { web: WebServices; session: WebSession };
};
