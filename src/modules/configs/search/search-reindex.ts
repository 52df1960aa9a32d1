/** Rebuilding and trimming the configuration search index (documents as search-index.ts describes). */
import { and, asc, eq, lt, lte, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../../db/client.ts";
import { configSearchDocs, configs } from "../../../db/schema/index.ts";
import { readBlob } from "../storage/store.ts";
import { indexConfigText, indexSeries } from "./search-index.ts";
import type { MaintenanceProgress } from "../storage/maintenance-progress.ts";

const series = (deviceId: number, command: string) =>
  and(eq(configSearchDocs.deviceId, deviceId), eq(configSearchDocs.command, command));

/**
 * After versions of a series were purged: the documents of versions older than the oldest one left go, and
 * that version's document becomes its whole text (lines it kept from purged versions were in theirs). A series
 * with nothing left loses all its documents.
 */
export async function trimSeriesIndex(tx: DbOrTx, deviceId: number, command: string): Promise<void> {
  const [oldest] = await tx
    .select({ id: configs.id, blobHash: configs.blobHash })
    .from(configs)
    .where(and(eq(configs.deviceId, deviceId), eq(configs.command, command)))
    .orderBy(asc(configs.id))
    .limit(1);
  if (!oldest) {
    await tx.delete(configSearchDocs).where(series(deviceId, command));
    return;
  }
  const [older] = await tx
    .select({ id: configSearchDocs.id })
    .from(configSearchDocs)
    .where(and(series(deviceId, command), lt(configSearchDocs.configId, oldest.id)))
    .limit(1);
  if (!older) return;
  await tx.delete(configSearchDocs).where(and(series(deviceId, command), lte(configSearchDocs.configId, oldest.id)));
  await indexConfigText(tx, {
    deviceId,
    command,
    configId: oldest.id,
    text: await readBlob(tx, oldest.blobHash),
    previous: "",
  });
}

/**
 * Rebuilds one series' documents from its stored versions, as one document (indexSeries). A purge that later
 * removes its newest version drops it for the oldest version's whole text (trimSeriesIndex); until then it also
 * holds lines only purged versions had, which costs a search a candidate, never a match.
 */
export async function reindexSeries(tx: DbOrTx, deviceId: number, command: string): Promise<number> {
  await tx.delete(configSearchDocs).where(series(deviceId, command));
  const versions = await tx
    .select({ id: configs.id, blobHash: configs.blobHash })
    .from(configs)
    .where(and(eq(configs.deviceId, deviceId), eq(configs.command, command)))
    .orderBy(asc(configs.id));
  // Distinct lines only: a long history holds each unchanged line once here, not once per version.
  const lines = new Set<string>();
  for (const v of versions) for (const line of (await readBlob(tx, v.blobHash)).split("\n")) if (line) lines.add(line);
  await indexSeries(tx, { deviceId, command, configIds: versions.map((v) => v.id), lines });
  return versions.length;
}

/**
 * Builds the index from scratch for every stored configuration (versions stored before the index existed, or
 * an index that is suspect), one series per transaction, and drops documents of series that no longer exist.
 */
export async function reindexAllConfigs(
  db: Db,
  progress?: MaintenanceProgress,
): Promise<{ series: number; versions: number }> {
  await db.run(
    sql`delete from ${configSearchDocs} where not exists (select 1 from ${configs} c where c.device_id = ${configSearchDocs.deviceId} and c.command = ${configSearchDocs.command})`,
  );
  const [{ total } = { total: 0 }] = progress
    ? await db.all<{ total: number }>(
        sql`select count(*) as total from (select distinct device_id, command from ${configs})`,
      )
    : [];
  let seriesCount = 0;
  let versions = 0;
  let after = { deviceId: 0, command: "" };
  for (;;) {
    // Walk the series in key order, a page at a time, so a large history is never held at once.
    const page = await db
      .selectDistinct({ deviceId: configs.deviceId, command: configs.command })
      .from(configs)
      .where(sql`(${configs.deviceId}, ${configs.command}) > (${after.deviceId}, ${after.command})`)
      .orderBy(asc(configs.deviceId), asc(configs.command))
      .limit(200);
    if (!page.length) break;
    for (const s of page) {
      versions += await db.transaction((tx) => reindexSeries(tx, s.deviceId, s.command));
      seriesCount++;
    }
    after = page.at(-1)!;
    progress?.(`search index: rebuilt ${seriesCount} of ${Number(total)} device commands`);
  }
  return { series: seriesCount, versions };
}
