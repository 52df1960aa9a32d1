/** Change rows whose diff can no longer be rendered on demand (changes.ts), because a version they need goes. */
import { and, eq, inArray, isNull } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { DbOrTx } from "../../../db/client.ts";
import { configChanges, configs } from "../../../db/schema/index.ts";
import { readBlob } from "../storage/blobs.ts";
import { changeDiff } from "../storage/store.ts";

const later = alias(configs, "later_config");

/**
 * Before versions are deleted: the change rows of the versions that follow them (and stay) keep their diff as
 * text, since it can no longer be rendered from the deleted version's text.
 */
export async function keepDiffsOfSuccessors(tx: DbOrTx, deletedIds: readonly number[]): Promise<void> {
  const deleted = new Set(deletedIds);
  for (let i = 0; i < deletedIds.length; i += 500) {
    const rows = await tx
      .select({
        changeId: configChanges.id,
        configId: configChanges.configId,
        command: configChanges.command,
        version: later.version,
        blobHash: later.blobHash,
        previousVersion: configs.version,
        previousBlobHash: configs.blobHash,
      })
      .from(configChanges)
      .innerJoin(configs, eq(configs.id, configChanges.previousConfigId))
      .innerJoin(later, eq(later.id, configChanges.configId))
      .where(and(inArray(configChanges.previousConfigId, deletedIds.slice(i, i + 500)), isNull(configChanges.diff)));
    for (const r of rows) {
      if (deleted.has(r.configId)) continue;
      const diff = changeDiff(
        await readBlob(tx, r.previousBlobHash),
        await readBlob(tx, r.blobHash),
        r.command,
        r.previousVersion,
        r.version,
      );
      await tx.update(configChanges).set({ diff: diff.text }).where(eq(configChanges.id, r.changeId));
    }
  }
}
