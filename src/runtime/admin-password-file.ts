import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Where the first start leaves the generated password of `admin` (when ADMIN_PASSWORD does not give one). */
export const adminPasswordPath = (storageDir: string) => join(storageDir, "admin-password");

/**
 * Writes the password to a file only the service's user may read, never to the console: a container's or
 * journald's log keeps what a process prints for anyone who may read the logs. Returns the file's path.
 */
export function writeAdminPasswordFile(storageDir: string, password: string): string {
  const path = adminPasswordPath(storageDir);
  writeFileSync(path, `${password}\n`, { mode: 0o600 });
  chmodSync(path, 0o600); // a file left by an earlier database kept its own mode
  return path;
}
