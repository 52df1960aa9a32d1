import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { DbOrTx } from "../db/client.ts";
import { AppKeyError, createSecretBox, parseAppKey, type SecretBox } from "../platform/secrets/box.ts";
import { keyInUse } from "../platform/secrets/encrypted-columns.ts";
import { resolveAppKey } from "./storage.ts";

/**
 * The app key file and its rotation. `svc key:rotate` (file mode) goes:
 *
 *   1. write the new key to app.key.next (mode 0600, fsynced)
 *   2. re-encrypt every secret under it in ONE database transaction, commit (and make the commit durable)
 *   3. rename app.key.next over app.key (atomic), fsync the directory
 *
 * Whatever the step a crash stops at, the key the stored secrets need is on disk: before the commit it is
 * app.key, after it app.key.next until the rename makes it app.key. A leftover app.key.next is settled by
 * trying it: if the stored secrets decrypt with it, the commit happened and it is moved over app.key;
 * otherwise (they decrypt with app.key, or the file is unreadable, or nothing is stored) it is deleted.
 * Start-up and the next rotation both settle first.
 */
export const appKeyPath = (storageDir: string) => join(storageDir, "app.key");
export const pendingKeyPath = (storageDir: string) => join(storageDir, "app.key.next");

/** A rename or a new file is durable only once its directory is synced; not every platform allows that. */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // e.g. Windows cannot open a directory; the rename is still atomic there
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export const readKeyFile = (path: string) => readFileSync(path, "utf8").trim();

export function writePendingKey(storageDir: string, key: string): void {
  // wx: a second rotation running at the same moment fails here instead of overwriting the first one's key.
  const fd = openSync(pendingKeyPath(storageDir), "wx", 0o600);
  try {
    writeSync(fd, key + "\n");
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  syncDirectory(storageDir);
}

export function promotePendingKey(storageDir: string): void {
  renameSync(pendingKeyPath(storageDir), appKeyPath(storageDir));
  syncDirectory(storageDir);
}

function discardPendingKey(storageDir: string): void {
  rmSync(pendingKeyPath(storageDir), { force: true });
  syncDirectory(storageDir);
}

const openKey = async (text: string): Promise<SecretBox | undefined> => {
  try {
    return await createSecretBox(parseAppKey(text));
  } catch {
    return undefined;
  }
};

/** What settling found: nothing to do, an interrupted rotation finished, or an unused next key removed. */
export type Settled = "none" | "finished" | "discarded";

export async function settlePendingKey(storageDir: string, db: DbOrTx): Promise<Settled> {
  const pendingPath = pendingKeyPath(storageDir);
  if (!existsSync(pendingPath)) return "none";
  const pending = await openKey(readKeyFile(pendingPath));
  if (!pending) {
    // Written only partly: the rotation stopped before it encrypted anything with it.
    discardPendingKey(storageDir);
    return "discarded";
  }
  const currentPath = appKeyPath(storageDir);
  const current = existsSync(currentPath) ? await openKey(readKeyFile(currentPath)) : undefined;
  const inUse = await keyInUse(db, current ? [pending, current] : [pending]);
  if (inUse === 0 || (inUse === null && !current)) {
    promotePendingKey(storageDir);
    return "finished";
  }
  if (inUse === 1 || inUse === null) {
    discardPendingKey(storageDir);
    return "discarded";
  }
  throw new AppKeyError(
    `neither ${currentPath} nor ${pendingPath} decrypts the stored credentials; both are left as they are: restore app.key from a backup or set APP_KEY`,
  );
}

/**
 * The launchers' app key: APP_KEY wins; otherwise an interrupted rotation is settled, then storage/app.key is
 * read, or created on the very first start.
 */
export async function loadAppKey(
  config: { appKey: string | undefined; storageDir: string },
  db: DbOrTx,
): Promise<{ key: string; settled: Settled }> {
  if (config.appKey) return { key: config.appKey, settled: "none" };
  const settled = await settlePendingKey(config.storageDir, db);
  return { key: resolveAppKey(undefined, config.storageDir), settled };
}
