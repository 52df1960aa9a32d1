import { eq, inArray, sql } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client.ts";
import { configChanges, configs, type JobTrigger } from "../../../db/schema/index.ts";
import { demoteBlob, putWholeBlobs, readBlob, readBlobs } from "./blobs.ts";
import { sameDigestKey } from "./secrets-digest.ts";
import { unifiedDiff } from "../history/config-diff.ts";
import { gzipText, lineCount, normalizeConfigText } from "./text.ts";
import { utf8Length } from "../../../kernel/text-bytes.ts";
import { sha256Hex } from "../../../kernel/hashing.ts";
import { queueForIndex } from "../search/search-index.ts";
import { deviceRef, recordEvents } from "../../../platform/outbox/record.ts";

export { readBlob };

export type StoreResult = { configId: number; version: number; changed: boolean };

/** Secret values differ (their digests do), when both digests are known: a version stored before has none. */
/** Whether both digests are known, made under the same key (secrets-digest.ts), and differ. */
const secretsDiffer = (previous: string | null | undefined, current: string | null | undefined) =>
  previous != null && current != null && sameDigestKey(previous, current) && previous !== current;

/** A change row's diff: from one version of a command to the next (version 0: nothing). */
export const changeDiff = (
  previousText: string,
  text: string,
  command: string,
  previousVersion: number,
  version: number,
) => unifiedDiff(previousText, text, `${command} v${previousVersion}`, `${command} v${version}`);

type ConfigRow = typeof configs.$inferSelect;

/** What a command's latest version is compared and stored by. */
export type LatestVersion = Pick<
  ConfigRow,
  "id" | "command" | "version" | "blobHash" | "significantHash" | "secretsDigest"
>;

/** The latest stored version of each of a device's commands, in one query; a command with nothing stored is absent. */
export async function latestVersions(
  db: DbOrTx,
  deviceId: number,
  commands: readonly string[],
): Promise<Map<string, LatestVersion>> {
  if (!commands.length) return new Map();
  // SQL, not drizzle's builder (60 us to build): it runs for every stored download, unchanged ones too.
  const rows = await db.all<LatestVersion>(sql`
    select c.id, c.command, c.version, c.blob_hash as "blobHash", c.significant_hash as "significantHash", c.secrets_digest as "secretsDigest" from ${configs} c
    where c.device_id = ${deviceId} and c.command in (${sql.join(
      [...new Set(commands)].map((command) => sql`${command}`),
      sql`, `,
    )})
      and c.version = (select max(v.version) from ${configs} v where v.device_id = c.device_id and v.command = c.command)`);
  return new Map(rows.map((r) => [r.command, r]));
}

/** The id of the latest stored version of each of a device's commands; a command with nothing stored is absent. */
export async function latestConfigIds(
  db: DbOrTx,
  deviceId: number,
  commands: readonly string[],
): Promise<Map<string, number>> {
  return new Map([...(await latestVersions(db, deviceId, commands))].map(([command, row]) => [command, row.id]));
}

/**
 * Counts a check that found the configuration unchanged without downloading it (an SNMP config-change OID that
 * has not moved) as one more sighting of each command's latest version, as an identical download would.
 */
export async function markLatestSeen(
  tx: DbOrTx,
  deviceId: number,
  commands: readonly string[],
  now: Date,
): Promise<number[]> {
  const ids = [...(await latestConfigIds(tx, deviceId, commands)).values()];
  if (ids.length)
    await tx
      .update(configs)
      .set({ lastSeenAt: now, seenCount: sql`${configs.seenCount} + 1` })
      .where(inArray(configs.id, ids));
  return ids;
}

export type StoreInput = {
  deviceId: number;
  /** One output per command (at most one each), with the digest of the secret values masked in it, if known. */
  outputs: readonly { command: string; text: string; secretsDigest?: string | null }[];
  /** The view of a command's text that decides whether it changed (volatile lines left out). */
  significant: (command: string, text: string) => string;
  trigger: JobTrigger;
  jobId: number | null;
  /** Who changed the configuration, when a syslog message said so (config_changes.changed_by). */
  changedBy?: string | null;
  now: Date;
  /**
   * Told of the versions this store created, in its transaction: how the compliance after-backup queue learns of
   * them (the collector passes modules/compliance's queueForCompliance) without the store knowing compliance.
   */
  onNewVersions?: (tx: DbOrTx, versions: readonly NewVersion[]) => Promise<void>;
};

/** A version a store just created. */
export type NewVersion = { deviceId: number; command: string; configId: number };

/** An output ready to store: normalised, measured, and hashed whole and as it compares (see digestOutputs). */
export type Digested = {
  command: string;
  text: string;
  significantHash: string;
  hash: string;
  size: number;
  secretsDigest: string | null;
};

/** What storeConfigs needs worked out before its transaction: see prepareStore. */
export type PreparedStore = Omit<StoreInput, "outputs"> & {
  outputs: readonly Digested[];
  compressed: ReadonlyMap<string, Uint8Array>;
};

/**
 * The work of storing that needs no write lock, done before the transaction: each text compressed when it
 * differs from the command's latest version as stored now (digestOutputs has normalised and hashed it). A job
 * that awaited the compression inside its transaction kept every other job's store waiting meanwhile
 * (bench:collect: 250 ms per job). storeConfigs checks again under the lock and compresses whatever it still lacks.
 */
export async function prepareStore(
  db: DbOrTx,
  input: Omit<StoreInput, "outputs"> & { outputs: readonly Digested[] },
): Promise<PreparedStore> {
  const commands = input.outputs.map((o) => o.command);
  if (new Set(commands).size !== commands.length) throw new Error("storeConfigs takes one output per command");
  const latest = await latestVersions(db, input.deviceId, commands);
  return {
    ...input,
    compressed: await compressChanged(input.outputs, (command) => latest.get(command)?.significantHash),
  };
}

/** The outputs whose significant hash differs from the stored one, compressed, by text hash. */
export async function compressChanged(
  outputs: readonly Digested[],
  storedHash: (command: string) => string | undefined,
): Promise<Map<string, Uint8Array>> {
  const changed = new Map(
    outputs.filter((o) => storedHash(o.command) !== o.significantHash).map((o) => [o.hash, o.text]),
  );
  return new Map(await Promise.all([...changed].map(async ([hash, text]) => [hash, await gzipText(text)] as const)));
}

/**
 * Each output normalised, measured and hashed: what a download is compared and stored by. Needs no database:
 * the collector does it before its write transaction (collector/store-download.ts).
 */
export const digestOutputs = (
  outputs: StoreInput["outputs"],
  significant: StoreInput["significant"],
): Promise<Digested[]> =>
  Promise.all(
    outputs.map(async ({ command, text, secretsDigest = null }) => {
      const normal = normalizeConfigText(text);
      const hash = await sha256Hex(normal);
      // A text nothing is left out of compares as it is (a filter or exclusion that drops nothing hands it back).
      const compared = significant(command, normal);
      return {
        command,
        text: normal,
        significantHash: compared === normal ? hash : await sha256Hex(compared),
        hash,
        size: utf8Length(normal),
        secretsDigest,
      };
    }),
  );

/**
 * Stores what one download got from a device (prepared by prepareStore), each command's output as StoreResult
 * says. The same significant content as the command's latest version (volatile lines ignored) only moves that
 * version's last-seen time and seen count; anything else becomes the next version, with its text stored once by
 * hash (whole; the text before it becomes a delta, blobs.ts), a change row counting the lines it changed, and a
 * place in the queues of the search index and the after-backup compliance pass. Each step runs once for all the
 * commands: a statement costs the collector more than the rows it writes. Call it inside the transaction that also finishes the job, so a retried job can
 * never store a download twice.
 */
export async function storeConfigs(tx: DbOrTx, input: PreparedStore): Promise<StoreResult[]> {
  const { outputs } = input;
  const latest = await latestVersions(
    tx,
    input.deviceId,
    outputs.map((o) => o.command),
  );
  // The volatile-line rules (template filters, compare exclusions) and the normalising may have changed since a
  // latest version was stored: what counts is whether it differs from this text under today's rules.
  const previousTexts = await readBlobs(
    tx,
    outputs.flatMap((o) => {
      const l = latest.get(o.command);
      return l && (l.significantHash !== o.significantHash || secretsDiffer(l.secretsDigest, o.secretsDigest))
        ? [l.blobHash]
        : [];
    }),
  );
  const results = new Map<string, StoreResult>();
  const seen: number[] = [];
  const fresh: (Digested & { latest?: LatestVersion; previous: string; secretsChanged: boolean })[] = [];
  for (const o of outputs) {
    const l = latest.get(o.command);
    const secretsChanged = secretsDiffer(l?.secretsDigest, o.secretsDigest);
    let previous = "";
    if (l && (l.significantHash !== o.significantHash || secretsChanged)) {
      previous = previousTexts.get(l.blobHash) ?? "";
      if (!previousTexts.has(l.blobHash)) throw new Error(`config blob ${l.blobHash} is missing`);
    }
    // The same masked text with other secret values (a rotated key) is a new version all the same.
    if (
      l &&
      !secretsChanged &&
      (l.significantHash === o.significantHash ||
        (await sha256Hex(input.significant(o.command, normalizeConfigText(previous)))) === o.significantHash)
    ) {
      // The stored hash follows the current rules, so the next download compares by hash alone again.
      if (l.significantHash === o.significantHash) seen.push(l.id);
      else
        await tx
          .update(configs)
          .set({ lastSeenAt: input.now, seenCount: sql`${configs.seenCount} + 1`, significantHash: o.significantHash })
          .where(eq(configs.id, l.id));
      // A version stored before digests were kept, or under another key (its device moved between a local and a
      // remote zone), takes this one's, so the next rotation shows.
      if (o.secretsDigest != null && (l.secretsDigest == null || !sameDigestKey(l.secretsDigest, o.secretsDigest)))
        await tx.update(configs).set({ secretsDigest: o.secretsDigest }).where(eq(configs.id, l.id));
      results.set(o.command, { configId: l.id, version: l.version, changed: false });
    } else fresh.push({ ...o, latest: l, previous, secretsChanged });
  }
  if (seen.length)
    await tx
      .update(configs)
      .set({ lastSeenAt: input.now, seenCount: sql`${configs.seenCount} + 1` })
      .where(inArray(configs.id, seen));

  if (fresh.length) {
    await putWholeBlobs(tx, fresh, input.now, input.compressed);
    const newHashes = new Set(fresh.map((f) => f.hash));
    for (const f of fresh) {
      // A text this download stores again (another command's, or its own from before) is a latest text: stays whole.
      if (f.latest && !newHashes.has(f.latest.blobHash))
        await demoteBlob(tx, { hash: f.latest.blobHash, text: f.previous }, { hash: f.hash, text: f.text });
    }
    // Only the latest version's hash is compared (see the schema): the one before keeps none.
    const superseded = fresh.flatMap((f) => (f.latest ? [f.latest.id] : []));
    if (superseded.length) await tx.update(configs).set({ significantHash: "" }).where(inArray(configs.id, superseded));
    const versions = fresh.map((f) => ({
      deviceId: input.deviceId,
      command: f.command,
      version: (f.latest?.version ?? 0) + 1,
      blobHash: f.hash,
      significantHash: f.significantHash,
      lines: lineCount(f.text),
      size: f.size,
      jobId: input.jobId,
      secretsDigest: f.secretsDigest,
      secretsChanged: f.secretsChanged,
    }));
    // These inserts (and putWholeBlobs', queueForIndex's) are SQL, not drizzle's builder, which took 0.1-0.15 ms to
    // build each one, on every stored download: the collector's store thread spent more on building than on SQLite.
    const now = input.now.getTime();
    const inserted = await tx.all<{ id: number; command: string }>(sql`insert into ${configs}
      (device_id, command, version, blob_hash, significant_hash, lines, size, first_seen_at, last_seen_at, seen_count, job_id, secrets_digest, secrets_changed)
      values ${sql.join(
        versions.map(
          (v) =>
            sql`(${v.deviceId}, ${v.command}, ${v.version}, ${v.blobHash}, ${v.significantHash}, ${v.lines}, ${v.size}, ${now}, ${now}, 1, ${v.jobId}, ${v.secretsDigest}, ${v.secretsChanged ? 1 : 0})`,
        ),
        sql`, `,
      )}
      returning id, command`);
    const ids = new Map(inserted.map((r) => [r.command, r.id]));
    const diffs: { added: number; removed: number }[] = [];
    await tx.run(sql`insert into ${configChanges}
      (device_id, command, config_id, previous_config_id, diff, lines_added, lines_removed, trigger, changed_by, created_at)
      values ${sql.join(
        fresh.map((f, i) => {
          const v = versions[i]!;
          // A first version adds every line: only a later one needs a diff to count what changed.
          const diff = f.latest
            ? changeDiff(f.previous, f.text, f.command, f.latest.version, v.version)
            : { added: v.lines, removed: 0 };
          diffs.push(diff);
          // The diff is rendered from the two texts when asked (changes.ts); only its size is kept.
          return sql`(${input.deviceId}, ${f.command}, ${ids.get(f.command)!}, ${f.latest?.id ?? null}, null, ${diff.added}, ${diff.removed}, ${input.trigger}, ${input.changedBy ?? null}, ${now})`;
        }),
        sql`, `,
      )}`);
    // The event commits with the versions (a download rolled back for a lost lease has none).
    const device = (await deviceRef(tx, input.deviceId))!;
    await recordEvents(
      tx,
      fresh.map((f, i) => ({
        type: "config.changed" as const,
        payload: {
          device,
          command: f.command,
          old_version_id: f.latest?.id ?? null,
          new_version_id: ids.get(f.command)!,
          lines_added: diffs[i]!.added,
          lines_removed: diffs[i]!.removed,
          secrets_changed: f.secretsChanged,
          job_id: input.jobId,
          changed_by: input.changedBy ?? null,
        },
      })),
      input.now,
    );
    const queued = fresh.map((f) => ({ deviceId: input.deviceId, command: f.command, configId: ids.get(f.command)! }));
    await queueForIndex(tx, queued);
    await input.onNewVersions?.(tx, queued);
    for (const v of versions)
      results.set(v.command, { configId: ids.get(v.command)!, version: v.version, changed: true });
  }
  return outputs.map((o) => results.get(o.command)!);
}

/** storeConfigs for one command's output. */
export async function storeConfig(
  tx: DbOrTx,
  input: Omit<StoreInput, "outputs" | "significant"> & {
    command: string;
    text: string;
    significant: (text: string) => string;
  },
): Promise<StoreResult> {
  const { command, text, significant, ...rest } = input;
  const bySignificant = (_: string, t: string) => significant(t);
  const outputs = await digestOutputs([{ command, text }], bySignificant);
  const [result] = await storeConfigs(tx, await prepareStore(tx, { ...rest, outputs, significant: bySignificant }));
  return result!;
}
