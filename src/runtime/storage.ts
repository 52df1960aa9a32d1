import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateAppKey } from "../platform/secrets/box.ts";
import { removeBackupLeftovers } from "../db/backup.ts";

/**
 * Creates the storage directory, and for a file: URL the SQLite file's directory and the file itself (mode
 * 0600); removes what backups stopped mid-way left behind.
 */
export function ensureStorage(storageDir: string, databaseUrl: string): void {
  mkdirSync(storageDir, { recursive: true });
  if (databaseUrl.startsWith("file:")) {
    const path = databaseUrl.slice("file:".length).split("?")[0]!;
    const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ".";
    if (dir) mkdirSync(dir, { recursive: true });
    // Created here, empty (an empty file is an empty SQLite database), so that it is the owner's alone from the
    // start, like app.key: SQLite would create it, and its -wal and -shm files, readable by everyone (0644).
    if (path && path !== ":memory:" && !existsSync(path)) {
      try {
        writeFileSync(path, "", { mode: 0o600, flag: "wx" });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err; // another process starting created it
      }
    }
  }
  removeBackupLeftovers(storageDir);
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
