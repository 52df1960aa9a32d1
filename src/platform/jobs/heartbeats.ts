import { and, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { processHeartbeats, type HeartbeatKind } from "../../db/schema/index.ts";

export type HeartbeatIdentity = {
  kind: HeartbeatKind;
  owner: string;
  host: string;
  pid: number;
  version: string;
  concurrency: number;
  startedAt: Date;
  details?: Record<string, unknown>;
};

/** How often a collector and its scheduler say they are alive; the checks call one silent for 6 of these stale. */
export const HEARTBEAT_INTERVAL_MS = 15_000;
export const HEARTBEAT_STALE_MS = 6 * HEARTBEAT_INTERVAL_MS;

/** Upserts the process's row with seen_at = now. */
export async function recordHeartbeat(db: DbOrTx, who: HeartbeatIdentity, now: Date): Promise<void> {
  const { kind, owner, host, pid, version, concurrency, startedAt, details = null } = who;
  await db
    .insert(processHeartbeats)
    .values({ kind, owner, host, pid, version, concurrency, startedAt, seenAt: now, details })
    .onConflictDoUpdate({
      target: [processHeartbeats.owner, processHeartbeats.kind],
      set: { seenAt: now, concurrency, version, details },
    });
}

/** A clean stop: the process is gone on purpose, so nothing should warn that it went silent. */
export async function forgetHeartbeats(db: DbOrTx, owner: string): Promise<void> {
  await db.delete(processHeartbeats).where(eq(processHeartbeats.owner, owner));
}

/** One of a process's rows (a syslog receiver stopped with its collector still running). */
export async function forgetHeartbeat(db: DbOrTx, owner: string, kind: HeartbeatKind): Promise<void> {
  await db.delete(processHeartbeats).where(and(eq(processHeartbeats.owner, owner), eq(processHeartbeats.kind, kind)));
}

export async function heartbeatsOf(db: DbOrTx, kind: HeartbeatKind) {
  return db
    .select()
    .from(processHeartbeats)
    .where(and(eq(processHeartbeats.kind, kind)));
}
