import type { ApiVersion } from "../api/versions.ts";

/**
 * Where the generated API description of a version lives, relative to STORAGE_DIR. The generator
 * (`svc api-docs:build`) writes these files and the web interface reads them; this is their one contract.
 * Plain string joins: src/ runs on Web APIs only.
 */
export const API_DOCS_MARKDOWN = "docs.md";
/** The cached extraction: the OpenAPI 3.1 document `--no-generate` renders from. */
export const API_DOCS_OPENAPI = "openapi.json";

/** `<storageDir>/app/api-docs/v1` */
export const apiDocsDir = (storageDir: string, version: ApiVersion) =>
  `${storageDir.replace(/\/+$/, "")}/app/api-docs/${version}`;

export const apiDocsFiles = (storageDir: string, version: ApiVersion) => {
  const dir = apiDocsDir(storageDir, version);
  return { dir, markdown: `${dir}/${API_DOCS_MARKDOWN}`, openapi: `${dir}/${API_DOCS_OPENAPI}` };
};
