import { and, desc, eq, inArray, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { configChanges, configs, type JobTrigger } from "../../db/schema/index.ts";
import { demoteBlob, putWholeBlob, readBlob } from "./blobs.ts";
import { unifiedDiff } from "./config-diff.ts";
import { normalizeConfigText, sha256Hex } from "./text.ts";
import { indexConfigText } from "./search-index.ts";

export { readBlob };

export type StoreResult = { configId: number; version: number; changed: boolean };

/** A change row's diff: from one version of a command to the next (version 0: nothing). */
export const changeDiff = (previousText: string, text: string, command: string, previousVersion: number, version: number) =>
  unifiedDiff(previousText, text, `${command} v${previousVersion}`, `${command} v${version}`);

/** The id of the latest stored version of each of a device's commands; a command with nothing stored is absent. */
export async function latestConfigIds(db: DbOrTx, deviceId: number, commands: readonly string[]): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (const command of new Set(commands)) {
    const [latest] = await db
      .select({ id: configs.id })
      .from(configs)
      .where(and(eq(configs.deviceId, deviceId), eq(configs.command, command)))
      .orderBy(desc(configs.version))
      .limit(1);
    if (latest) ids.set(command, latest.id);
  }
  return ids;
}

/**
 * Counts a check that found the configuration unchanged without downloading it (an SNMP config-change OID that
 * has not moved) as one more sighting of each command's latest version, as an identical download would.
 */
export async function markLatestSeen(tx: DbOrTx, deviceId: number, commands: readonly string[], now: Date): Promise<number[]> {
  const ids = [...(await latestConfigIds(tx, deviceId, commands)).values()];
  if (ids.length) await tx.update(configs).set({ lastSeenAt: now, seenCount: sql`${configs.seenCount} + 1` }).where(inArray(configs.id, ids));
  return ids;
}

/**
 * Stores one command's output for a device. The same significant content as the latest version (volatile
 * lines ignored) only moves that version's last-seen time and seen count; anything else becomes the next
 * version, with its text stored once by hash (whole; the text before it becomes a delta, blobs.ts) and a change
 * row counting the lines it changed. Call it inside the transaction that also finishes the job, so a retried job
 * can never store a download twice.
 */
export async function storeConfig(
  tx: DbOrTx,
  input: {
    deviceId: number;
    command: string;
    text: string;
    /** The view of the text that decides whether it changed (volatile lines left out). */
    significant: (text: string) => string;
    trigger: JobTrigger;
    jobId: number | null;
    now: Date;
  },
): Promise<StoreResult> {
  const text = normalizeConfigText(input.text);
  const significantHash = await sha256Hex(input.significant(text));
  const [latest] = await tx
    .select()
    .from(configs)
    .where(and(eq(configs.deviceId, input.deviceId), eq(configs.command, input.command)))
    .orderBy(desc(configs.version))
    .limit(1);

  const seenAgain = async () => {
    // The stored hash follows the current rules, so the next download compares by hash alone again.
    await tx
      .update(configs)
      .set({ lastSeenAt: input.now, seenCount: sql`${configs.seenCount} + 1`, significantHash })
      .where(eq(configs.id, latest!.id));
    return { configId: latest!.id, version: latest!.version, changed: false };
  };
  if (latest && latest.significantHash === significantHash) return seenAgain();
  // The volatile-line rules (template filters, compare exclusions) and the normalising may have changed since the
  // latest version was stored: what counts is whether it differs from this text under today's rules.
  const previous = latest ? await readBlob(tx, latest.blobHash) : "";
  if (latest && (await sha256Hex(input.significant(normalizeConfigText(previous)))) === significantHash) return seenAgain();

  const hash = await sha256Hex(text);
  const size = new TextEncoder().encode(text).length;
  await putWholeBlob(tx, { hash, text, size, now: input.now });
  if (latest) {
    await demoteBlob(tx, { hash: latest.blobHash, text: previous }, { hash, text });
    // Only the latest version's hash is compared (see the schema): the one before keeps none.
    await tx.update(configs).set({ significantHash: "" }).where(eq(configs.id, latest.id));
  }
  const version = (latest?.version ?? 0) + 1;
  const lines = text === "" ? 0 : text.split("\n").length - 1;
  const [row] = await tx
    .insert(configs)
    .values({
      deviceId: input.deviceId, command: input.command, version, blobHash: hash, significantHash, lines, size,
      firstSeenAt: input.now, lastSeenAt: input.now, seenCount: 1, jobId: input.jobId,
    })
    .returning({ id: configs.id });

  // A first version adds every line: only a later one needs a diff to count what changed.
  const diff = latest ? changeDiff(previous, text, input.command, latest.version, version) : { added: lines, removed: 0 };
  await tx.insert(configChanges).values({
    deviceId: input.deviceId, command: input.command, configId: row!.id, previousConfigId: latest?.id ?? null,
    // The diff is rendered from the two texts when asked (changes.ts); only its size is kept.
    diff: null, linesAdded: diff.added, linesRemoved: diff.removed, trigger: input.trigger, createdAt: input.now,
  });
  await indexConfigText(tx, { deviceId: input.deviceId, command: input.command, configId: row!.id, text, previous });
  return { configId: row!.id, version, changed: true };
}
