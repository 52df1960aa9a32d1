import { inArray } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { deviceTags, devices, events } from "../../db/schema/index.ts";
import { EVENT_CATALOGUE, type DeviceRef, type EventPayload, type EventType } from "./catalogue.ts";

export type NewEvent<T extends EventType = EventType> = { type: T; payload: EventPayload<T> };

/** Rows per statement: far below SQLite's variable limit at 5 a row. */
const ROWS_PER_STATEMENT = 1_000;

/**
 * Writes an event to the outbox. Call it with the transaction that makes the change, so the event commits and
 * rolls back with it; a collector's dispatcher delivers it later (dispatch.ts). The payload is checked against
 * the catalogue: a payload the catalogue does not describe is a bug, and fails the change rather than go out.
 */
export const recordEvent = <T extends EventType>(
  tx: DbOrTx,
  type: T,
  payload: EventPayload<T>,
  now: Date,
): Promise<void> => recordEvents(tx, [{ type, payload }], now);

/** recordEvent for many at once (a bulk write of thousands of devices): a few statements. */
export async function recordEvents(tx: DbOrTx, list: NewEvent[], now: Date): Promise<void> {
  const rows = list.map(({ type, payload }) => {
    const parsed = EVENT_CATALOGUE[type].payload.parse(payload) as Record<string, unknown>;
    const device = parsed.device as DeviceRef | undefined;
    return { type, payload: parsed, deviceId: device?.id ?? null, occurredAt: now };
  });
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT)
    await tx.insert(events).values(rows.slice(i, i + ROWS_PER_STATEMENT));
}

/**
 * An event that skips the dispatcher (written dispatched): it goes only where its caller queues it, as a
 * webhook's test ping goes to that webhook alone. Returns the row, for the caller's job.
 */
export async function recordDirectEvent<T extends EventType>(tx: DbOrTx, type: T, payload: EventPayload<T>, now: Date) {
  const parsed = EVENT_CATALOGUE[type].payload.parse(payload) as Record<string, unknown>;
  const [row] = await tx
    .insert(events)
    .values({ type, payload: parsed, deviceId: null, occurredAt: now, dispatchedAt: now })
    .returning();
  return row!;
}

/** Per statement: ids in an IN list stay well under SQLite's variable limit. */
const IDS_PER_QUERY = 500;

/** The devices' references for event payloads, read in two queries per 500 devices; unknown ids are left out. */
export async function deviceRefs(db: DbOrTx, ids: number[]): Promise<Map<number, DeviceRef>> {
  const refs = new Map<number, DeviceRef>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += IDS_PER_QUERY) {
    const chunk = unique.slice(i, i + IDS_PER_QUERY);
    const rows = await db
      .select({ id: devices.id, name: devices.name, ip: devices.ip, categoryId: devices.categoryId })
      .from(devices)
      .where(inArray(devices.id, chunk));
    for (const r of rows) refs.set(r.id, { id: r.id, name: r.name, ip: r.ip, category_id: r.categoryId, tag_ids: [] });
    const links = await db.select().from(deviceTags).where(inArray(deviceTags.deviceId, chunk));
    for (const l of links) refs.get(l.deviceId)?.tag_ids.push(l.tagId);
  }
  for (const r of refs.values()) r.tag_ids.sort((a, b) => a - b);
  return refs;
}

/** One device's reference; undefined when it does not exist. */
export const deviceRef = async (db: DbOrTx, id: number): Promise<DeviceRef | undefined> =>
  (await deviceRefs(db, [id])).get(id);
