import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateAppKey } from "../secrets/box.ts";

/** Creates the storage directory, and the SQLite file's directory for a file: URL elsewhere. */
export function ensureStorage(storageDir: string, databaseUrl: string): void {
  mkdirSync(storageDir, { recursive: true });
  if (databaseUrl.startsWith("file:")) {
    const path = databaseUrl.slice("file:".length).split("?")[0]!;
    const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ".";
    if (dir) mkdirSync(dir, { recursive: true });
  }
}

/** APP_KEY wins; otherwise storage/app.key, created (mode 0600) on first start. */
export function resolveAppKey(appKey: string | undefined, storageDir: string): string {
  if (appKey) return appKey;
  const path = join(storageDir, "app.key");
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  const key = generateAppKey();
  writeFileSync(path, key + "\n", { mode: 0o600, flag: "wx" });
  chmodSync(path, 0o600);
  return key;
}
