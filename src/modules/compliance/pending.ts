/**
 * The after-backup pass. Storing a new version queues it here (in the store's transaction, like the search
 * index's queue) while any assignment evaluates on backup; the collector evaluates the queue off the download
 * path (collector/compliance-pass.ts). A download that stores nothing new queues nothing, so it re-evaluates
 * nothing.
 */
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import { compliancePending, configs, devices, policies, policyAssignments } from "../../db/schema/index.ts";
import { assignmentCoversDevice, deviceFacts } from "./coverage.ts";
import { emptySummary, runChecks, type Check, type CheckSummary } from "./evaluate.ts";

/** Assignments the after-backup pass evaluates. */
const onBackup = and(eq(policyAssignments.enabled, true), eq(policyAssignments.runOnBackup, true));

/**
 * Queues versions just stored; call it in the transaction that stores them. Nothing is queued while no
 * assignment evaluates on backup (most installations, before compliance is set up), so the queue never fills
 * with versions nothing will read.
 */
export async function queueForCompliance(
  tx: DbOrTx,
  versions: readonly { deviceId: number; command: string; configId: number }[],
): Promise<void> {
  if (!versions.length) return;
  // As SQL, not with drizzle's builder: it runs for every stored download (see storeConfigs).
  await tx.run(sql`insert into ${compliancePending} (config_id, device_id, command)
    select column1, column2, column3 from (values ${sql.join(
      versions.map((v) => sql`(${v.configId}, ${v.deviceId}, ${v.command})`),
      sql`, `,
    )})
    where exists (select 1 from ${policyAssignments} where ${onBackup})`);
}

/**
 * Evaluates up to `limit` queued versions, oldest first, against the enabled on-backup assignments that cover
 * their devices and read their commands, then takes them off the queue. Another collector evaluating the same
 * entries meanwhile does no harm: a result per (assignment, device, version, policy revision) is stored once.
 */
export async function evaluatePendingVersions(
  db: Db,
  limit: number,
  now: Date,
): Promise<{ taken: number; summary: CheckSummary }> {
  const pending = await db
    .select({
      configId: compliancePending.configId,
      deviceId: compliancePending.deviceId,
      command: compliancePending.command,
      version: configs.version,
      blobHash: configs.blobHash,
    })
    .from(compliancePending)
    .innerJoin(configs, eq(configs.id, compliancePending.configId))
    .orderBy(asc(compliancePending.configId))
    .limit(limit);
  // Entries whose version was deleted went with it (cascade); none left means the queue is empty.
  if (!pending.length) return { taken: 0, summary: emptySummary() };
  const deviceIds = [...new Set(pending.map((p) => p.deviceId))];
  const [covering, facts] = await Promise.all([
    db
      .select({ deviceId: devices.id, assignment: policyAssignments, policy: policies })
      .from(policyAssignments)
      .innerJoin(policies, eq(policies.id, policyAssignments.policyId))
      .innerJoin(devices, assignmentCoversDevice)
      .where(and(onBackup, inArray(devices.id, deviceIds))),
    deviceFacts(db, inArray(devices.id, deviceIds)),
  ]);
  const factsOf = new Map(facts.map((f) => [f.id, f]));
  const checks: Check[] = [];
  for (const p of pending) {
    const device = factsOf.get(p.deviceId);
    if (!device) continue;
    for (const c of covering) {
      if (c.deviceId !== p.deviceId || (c.assignment.command ?? device.configCommand) !== p.command) continue;
      checks.push({
        assignment: c.assignment,
        policy: c.policy,
        device,
        command: p.command,
        config: { id: p.configId, version: p.version, blobHash: p.blobHash },
      });
    }
  }
  const summary = await runChecks(db, checks, now);
  const taken = await db
    .delete(compliancePending)
    .where(
      inArray(
        compliancePending.configId,
        pending.map((p) => p.configId),
      ),
    )
    .returning({ id: compliancePending.configId });
  return { taken: taken.length, summary };
}
