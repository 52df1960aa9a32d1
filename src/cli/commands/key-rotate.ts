import { existsSync } from "node:fs";
import { sql } from "drizzle-orm";
import { openSecretBox } from "../../runtime/bootstrap.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import {
  appKeyPath,
  pendingKeyPath,
  promotePendingKey,
  readKeyFile,
  settlePendingKey,
  writePendingKey,
  type Settled,
} from "../../runtime/app-key-file.ts";
import { generateAppKey } from "../../platform/secrets/box.ts";
import { decryptAll, encryptAll, UndecryptableSecretError } from "../../platform/secrets/encrypted-columns.ts";
import { CliError, defineCommand } from "../command.ts";
import { plural } from "../../kernel/words.ts";

/**
 * A committed transaction is in the WAL, which SQLite syncs lazily (synchronous=NORMAL): a power cut could
 * still undo it. A checkpoint syncs it, so the key file may follow. False when other connections keep it
 * from completing; the new key then stays in app.key.next, which the next start settles (see app-key-file.ts).
 */
async function makeDurable(db: Parameters<typeof decryptAll>[0], databaseUrl: string): Promise<boolean> {
  if (!databaseUrl.startsWith("file:")) return true;
  const [result] = await db.all<{ busy: number }>(sql`PRAGMA wal_checkpoint(FULL)`);
  return Number(result?.busy ?? 0) === 0;
}

const settledNote: Record<Exclude<Settled, "none">, (dir: string) => string> = {
  finished: (dir) =>
    `Finished an interrupted rotation first: ${pendingKeyPath(dir)} held the key the stored secrets use; it is now ${appKeyPath(dir)}.`,
  discarded: (dir) => `Removed ${pendingKeyPath(dir)}, left by an interrupted rotation that had not changed anything.`,
};

export const keyRotateCommand = defineCommand({
  summary: "Re-encrypt every stored secret under a new app key, in one transaction, and replace the key",
  options: {
    yes: {
      type: "boolean",
      description:
        "confirm rotating a key that comes from APP_KEY: the new key is printed once, as the last line, and APP_KEY must then be set to it by hand",
    },
  },
  async run(flags, { db, config, clock, io }) {
    const fromEnv = Boolean(config.appKey);
    if (fromEnv && !flags.yes) {
      throw new CliError(
        "the app key comes from APP_KEY, which svc cannot change for you: run svc key:rotate --yes, then set APP_KEY to the new key it prints as its last line (shown only once) and restart the API and every collector",
      );
    }
    const dir = config.storageDir;
    const newKey = generateAppKey();
    const newBox = await openSecretBox(newKey);
    let settled = "none" as Settled;
    let pendingWritten = false;

    let counts: Map<string, number>;
    try {
      // BEGIN IMMEDIATE: a second rotation waits here until this one has committed.
      counts = await db.transaction(async (tx) => {
        if (!fromEnv) {
          settled = await settlePendingKey(dir, tx);
          if (!existsSync(appKeyPath(dir))) {
            throw new CliError(
              `no app key to rotate: APP_KEY is not set and ${appKeyPath(dir)} does not exist (the service creates it on its first start)`,
            );
          }
        }
        const oldBox = await openSecretBox(fromEnv ? config.appKey! : readKeyFile(appKeyPath(dir)));
        const plain = await decryptAll(tx, oldBox);
        if (!fromEnv) {
          writePendingKey(dir, newKey);
          pendingWritten = true;
        }
        const counts = await encryptAll(tx, plain, newBox);
        // Stored configurations' secrets digests are keyed from the app key: under the new one every digest would
        // differ, and each device's next download would say its secrets changed. Forgotten, the next download keeps one.
        await tx.run(sql`update configs set secrets_digest = null where secrets_digest is not null`);
        const total = plain.length;
        await recordActivity(
          tx,
          { system: "svc key:rotate" },
          { action: "app_key.rotate", subjectType: "app_key", subjectId: null, after: { secrets_reencrypted: total } },
          clock.now(),
        );
        return counts;
      });
    } catch (err) {
      // Whether or not the commit happened, the stored secrets say which key they need.
      if (pendingWritten) await settlePendingKey(dir, db);
      if (err instanceof UndecryptableSecretError) throw new CliError(`${err.message}; nothing was changed`);
      throw err;
    }

    if (settled !== "none") io.print(settledNote[settled](dir));
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    const perTable = [...counts.entries()].map(([table, n]) => `${table}: ${n}`).join(", ");
    io.print(
      `Re-encrypted ${plural(total, "secret")} under a new app key${perTable ? ` (${perTable})` : ""}; the old key no longer opens them.`,
    );

    if (fromEnv) {
      io.print(
        "Set APP_KEY to the key below wherever the API and collectors run, then restart them. It is shown only this once:",
      );
      // Last line, alone, so a script can take it with `tail -n 1`.
      io.print(newKey);
      return;
    }
    if (!(await makeDurable(db, config.databaseUrl))) {
      io.print(
        `The new key is in ${pendingKeyPath(dir)}: another process held the database, so it becomes ${appKeyPath(dir)} when the service next starts or svc key:rotate runs again. Keep both files until then.`,
      );
      return;
    }
    try {
      promotePendingKey(dir);
    } catch (err) {
      // Another rotation that started right after this commit may have settled (moved) it already.
      if (!(err instanceof Error && "code" in err && err.code === "ENOENT")) throw err;
    }
    io.print(
      `Wrote the new key to ${appKeyPath(dir)}. Restart the API and every collector so they load it, and replace the copy in your backups.`,
    );
  },
});
