import type { DbOrTx } from "../../db/client.ts";
import { activityLog } from "../../db/schema/index.ts";
import type { AuthContext } from "../http/env.ts";

type Snapshot = Record<string, unknown> | null;

/** Field-level differences between two API representations (which never contain secrets). */
export function changedFields(before: Snapshot, after: Snapshot): Record<string, { old: unknown; new: unknown }> {
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  const changes: Record<string, { old: unknown; new: unknown }> = {};
  for (const key of keys) {
    // Times, and counts derived from other records, are not what the write changed (and a count of devices
    // would tell a scoped reader of the log about devices outside their scope).
    if (key === "updated_at" || key === "created_at" || key === "devices_count") continue;
    const old = before?.[key] ?? null;
    const now = after?.[key] ?? null;
    if (JSON.stringify(old) !== JSON.stringify(now)) changes[key] = { old, new: now };
  }
  return changes;
}

/**
 * Which devices an entry is about, so a reader whose role is scoped sees it only when all of them are in the
 * scope: devices by id, the devices carrying tags or in categories (judged against the scope's own tags and
 * categories), or every device. Entries about no device have none.
 */
export type Reach = { devices?: number[]; tags?: number[]; categories?: number[]; all?: true };

/**
 * Where an entry keeps its reach: under a key no API field can have, in the changes column (so no new column
 * is needed); it is dropped when the entry is shown.
 */
export const REACH_KEY = "@reach";

/** An API caller (its token), a web-session user (no token), or the system itself (the CLI, the scheduler). */
export type Actor =
  | Pick<AuthContext, "userId" | "username" | "tokenId" | "tokenName" | "ip">
  | { userId: number; username: string; tokenId: null; tokenName: string; ip: string }
  | { system: string };

export type ActivityEntry = {
  action: string;
  subjectType: string;
  subjectId: number | null;
  before?: Snapshot;
  after?: Snapshot;
  /** Write-only fields that were set: recorded as changed, never with their values. */
  secretsSet?: string[];
  /** The devices the entry is about, when its subject is not simply one device (which speaks for itself). */
  reach?: Reach;
};

/** Audit rows per statement: well under SQLite's 32,766 variables at 9 a row. */
const ROWS_PER_STATEMENT = 1_000;

/** Appends one audit row. Callers pass API representations, so secrets appear only as has_* flags. */
export const recordActivity = (db: DbOrTx, actor: Actor, entry: ActivityEntry, now: Date): Promise<void> =>
  recordActivities(db, actor, [entry], now);

/** Appends audit rows in the order given, a few statements for a bulk write of thousands. */
export async function recordActivities(db: DbOrTx, actor: Actor, entries: ActivityEntry[], now: Date): Promise<void> {
  const who =
    "system" in actor
      ? { userId: null, username: actor.system, tokenId: null, tokenName: null, ip: null }
      : {
          userId: actor.userId,
          username: actor.username,
          tokenId: actor.tokenId,
          tokenName: actor.tokenName,
          ip: actor.ip,
        };
  const rows = entries.map((entry) => ({
    ...who,
    action: entry.action,
    subjectType: entry.subjectType,
    subjectId: entry.subjectId,
    changes: {
      ...changedFields(entry.before ?? null, entry.after ?? null),
      ...Object.fromEntries((entry.secretsSet ?? []).map((field) => [field, { old: "[hidden]", new: "[changed]" }])),
      ...(entry.reach ? { [REACH_KEY]: { old: null, new: entry.reach } } : {}),
    },
    createdAt: now,
  }));
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT)
    await db.insert(activityLog).values(rows.slice(i, i + ROWS_PER_STATEMENT));
}
