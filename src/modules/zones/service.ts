import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { devices, remoteCollectors, zones } from "../../db/schema/index.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import { deviceScopeCondition, refuseUnlessScopeCovers } from "../../platform/auth/scope.ts";
import type { AuthContext } from "../../platform/http/env.ts";
import { ApiError } from "../../platform/http/errors.ts";
import {
  type CollectorState,
  remoteCollectorStates,
  remoteZonesWithoutCollector,
} from "../../platform/jobs/remote-collectors.ts";
import { hashSecret, newEnrollmentKey } from "./enrollment.ts";
import { zonesResource } from "./resource.ts";

/** Who acts and when: the API's handlers and the web pages pass the same. */
export type ZoneActor = { db: Db; auth: AuthContext; now: Date };

/**
 * The zone as the caller may see it (404 outside the scope), through the resource's own read. A write needs the
 * caller's scope to cover every device of the zone, as changing the zone itself does.
 */
async function zoneOf({ db, auth }: ZoneActor, id: number, writing: boolean) {
  await zonesResource.show(db, id, auth.scope);
  if (writing) await refuseUnlessScopeCovers(db, auth.scope, `Zone ${id}`, inArray(devices.zoneId, [id]));
  const [row] = await db.select().from(zones).where(eq(zones.id, id));
  return row!;
}

/** A new enrollment key for a remote zone: the old one stops working; the key is answered this once. */
export async function rotateEnrollmentKey(actor: ZoneActor, id: number): Promise<string> {
  const zone = await zoneOf(actor, id, true);
  if (zone.mode !== "remote") throw ApiError.conflict(`Zone ${id} is local: make it remote (mode) first`);
  const key = newEnrollmentKey();
  const { db, auth, now } = actor;
  await db.transaction(async (tx) => {
    await tx
      .update(zones)
      .set({ enrollmentKeyHash: await hashSecret(key), enrollmentKeyCreatedAt: now, updatedAt: now })
      .where(eq(zones.id, id));
    await recordActivity(
      tx,
      auth,
      { action: "zone.enrollment_key_rotate", subjectType: "zone", subjectId: id, secretsSet: ["enrollment_key"] },
      now,
    );
  });
  return key;
}

/** Nobody enrolls with the zone's key any more; enrolled collectors keep working. */
export async function revokeEnrollmentKey(actor: ZoneActor, id: number): Promise<void> {
  await zoneOf(actor, id, true);
  const { db, auth, now } = actor;
  await db.transaction(async (tx) => {
    await tx.update(zones).set({ enrollmentKeyHash: null, updatedAt: now }).where(eq(zones.id, id));
    await recordActivity(tx, auth, { action: "zone.enrollment_key_revoke", subjectType: "zone", subjectId: id }, now);
  });
}

/** The zone's remote collectors with their last heartbeat. */
export async function zoneCollectors(actor: ZoneActor, id: number): Promise<CollectorState[]> {
  await zoneOf(actor, id, false);
  return (await remoteCollectorStates(actor.db, actor.now)).filter((s) => s.zone_id === id);
}

/** Every remote collector, grouped by zone id (for a list of zones the caller already may see). */
export async function collectorsByZone(actor: Pick<ZoneActor, "db" | "now">): Promise<Map<number, CollectorState[]>> {
  const out = new Map<number, CollectorState[]>();
  for (const s of await remoteCollectorStates(actor.db, actor.now))
    (out.get(s.zone_id) ?? out.set(s.zone_id, []).get(s.zone_id)!).push(s);
  return out;
}

/**
 * Every remote collector with its last heartbeat, and the remote zones no live collector serves: only the zones
 * holding devices in the caller's scope.
 */
export async function collectorsOverview({ db, auth, now }: ZoneActor) {
  const inScope = auth.scope.all
    ? undefined
    : new Set(
        (await db.selectDistinct({ id: devices.zoneId }).from(devices).where(deviceScopeCondition(auth.scope))).map(
          (r) => r.id,
        ),
      );
  const seen = (zoneId: number) => !inScope || inScope.has(zoneId);
  const collectors = (await remoteCollectorStates(db, now)).filter((s) => seen(s.zone_id));
  const orphaned = (await remoteZonesWithoutCollector(db, now)).filter((z) => seen(z.id));
  return { collectors, zones_without_collector: orphaned };
}

/** Refuse a collector from its next request on (revoke), or remove it too (delete); it stops either way. */
export async function endCollector(
  actor: ZoneActor,
  id: number,
  collectorId: number,
  how: "revoke" | "delete",
): Promise<void> {
  await zoneOf(actor, id, true);
  const { db, auth, now } = actor;
  await db.transaction(async (tx) => {
    const where = and(eq(remoteCollectors.id, collectorId), eq(remoteCollectors.zoneId, id));
    const [row] = await tx.select().from(remoteCollectors).where(where);
    if (!row) throw ApiError.notFound(`Remote collector ${collectorId} of zone ${id}`);
    if (how === "delete") await tx.delete(remoteCollectors).where(where);
    else
      await tx
        .update(remoteCollectors)
        .set({ revokedAt: row.revokedAt ?? now, updatedAt: now })
        .where(where);
    await recordActivity(
      tx,
      auth,
      {
        action: `remote_collector.${how}`,
        subjectType: "remote_collector",
        subjectId: collectorId,
        before: { zone_id: id, name: row.name, revoked: row.revokedAt !== null },
        after: how === "delete" ? null : { zone_id: id, name: row.name, revoked: true },
      },
      now,
    );
  });
}
