import { readFile, stat } from "node:fs/promises";
import type { ApiVersion } from "../adapters/api/versions.ts";
import { apiDocsFiles } from "../adapters/docs/paths.ts";
import type { ApiDocsFiles } from "../adapters/web/api-docs-files.ts";

const markdownPath = (storageDir: string, version: ApiVersion) => apiDocsFiles(storageDir, version).markdown;

const absent = (err: unknown) => (err as NodeJS.ErrnoException).code === "ENOENT";

/** The generated files under STORAGE_DIR, read on every request so a fresh build shows without a restart. */
export function storageApiDocsFiles(storageDir: string): ApiDocsFiles {
  return {
    async stat(version) {
      try {
        const info = await stat(markdownPath(storageDir, version));
        return info.isFile() ? { sizeBytes: info.size, modifiedAt: info.mtime } : null;
      } catch (err) {
        if (absent(err)) return null;
        throw err;
      }
    },
    async read(version) {
      try {
        return await readFile(markdownPath(storageDir, version), "utf8");
      } catch (err) {
        if (absent(err)) return null;
        throw err;
      }
    },
  };
}
