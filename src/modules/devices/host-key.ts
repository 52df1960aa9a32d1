import { and, eq } from "drizzle-orm";
import { deviceScopeCondition, type DeviceScope } from "../../platform/auth/scope.ts";
import { devices } from "../../db/schema/index.ts";
import type { Db, DbOrTx } from "../../db/client.ts";
import type { AuthContext } from "../../platform/http/env.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { recordActivity } from "../../platform/audit/record.ts";

/**
 * Forgets (fingerprint null) or pins a device's SSH host key, for a device in the caller's scope (404 otherwise);
 * recorded even when nothing changed: someone chose to trust this device's key, and when matters.
 */
export async function resetHostKey(db: Db, auth: AuthContext, id: number, fingerprint: string | null, now: Date) {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select({ fingerprint: devices.hostKeyFingerprint })
      .from(devices)
      .where(and(eq(devices.id, id), deviceScopeCondition(auth.scope)));
    if (!row) throw ApiError.notFound(`Device ${id}`);
    await tx.update(devices).set({ hostKeyFingerprint: fingerprint, updatedAt: now }).where(eq(devices.id, id));
    await recordActivity(
      tx,
      auth,
      {
        action: "device.host_key_reset",
        subjectType: "device",
        subjectId: id,
        before: { host_key_fingerprint: row.fingerprint },
        after: { host_key_fingerprint: fingerprint },
      },
      now,
    );
    return { device_id: id, host_key_fingerprint: fingerprint, previous_fingerprint: row.fingerprint };
  });
}

/** The SSH host key fingerprint pinned for a device in the scope (null: the next connection pins what it sees); 404 otherwise. */
export async function pinnedHostKey(db: DbOrTx, scope: DeviceScope, id: number): Promise<string | null> {
  const [row] = await db
    .select({ fingerprint: devices.hostKeyFingerprint })
    .from(devices)
    .where(and(eq(devices.id, id), deviceScopeCondition(scope)));
  if (!row) throw ApiError.notFound(`Device ${id}`);
  return row.fingerprint;
}
