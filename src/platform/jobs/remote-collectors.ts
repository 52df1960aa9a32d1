import { and, eq, isNull } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { remoteCollectors, zones } from "../../db/schema/index.ts";
import { HEARTBEAT_STALE_MS } from "./heartbeats.ts";

/** A remote collector heartbeats every this often; silent for HEARTBEAT_STALE_MS it counts as not alive. */
export const REMOTE_HEARTBEAT_INTERVAL_MS = 15_000;

export type CollectorState = {
  id: number;
  zone_id: number;
  zone_name: string;
  name: string;
  version: string;
  sessions: number;
  spool_bytes: number;
  spool_dropped: number;
  last_heartbeat_at: string | null;
  alive: boolean;
  revoked: boolean;
};

/** Every enrolled remote collector with what its last heartbeat said, and whether it is alive now. */
export async function remoteCollectorStates(db: DbOrTx, now: Date): Promise<CollectorState[]> {
  const rows = await db
    .select({ c: remoteCollectors, zoneName: zones.name })
    .from(remoteCollectors)
    .innerJoin(zones, eq(zones.id, remoteCollectors.zoneId))
    .orderBy(remoteCollectors.id);
  return rows.map(({ c, zoneName }) => ({
    id: c.id,
    zone_id: c.zoneId,
    zone_name: zoneName,
    name: c.name,
    version: c.version,
    sessions: c.sessions,
    spool_bytes: c.spoolBytes,
    spool_dropped: c.spoolDropped,
    last_heartbeat_at: c.lastSeenAt?.toISOString() ?? null,
    alive: isAlive(c, now),
    revoked: c.revokedAt !== null,
  }));
}

const isAlive = (c: { lastSeenAt: Date | null; revokedAt: Date | null }, now: Date) =>
  c.revokedAt === null && c.lastSeenAt !== null && now.getTime() - c.lastSeenAt.getTime() < HEARTBEAT_STALE_MS;

/** Remote zones no live collector serves: their jobs wait in the queue until one heartbeats. */
export async function remoteZonesWithoutCollector(db: DbOrTx, now: Date): Promise<{ id: number; name: string }[]> {
  const remote = await db.select({ id: zones.id, name: zones.name }).from(zones).where(eq(zones.mode, "remote"));
  const live = await db
    .select({
      zoneId: remoteCollectors.zoneId,
      lastSeenAt: remoteCollectors.lastSeenAt,
      revokedAt: remoteCollectors.revokedAt,
    })
    .from(remoteCollectors)
    .where(and(isNull(remoteCollectors.revokedAt)));
  const served = new Set(live.filter((c) => isAlive(c, now)).map((c) => c.zoneId));
  return remote.filter((z) => !served.has(z.id));
}
