import { eq, inArray } from "drizzle-orm";
import { deviceJobAttempts } from "../../platform/settings/service.ts";
import type { DbOrTx } from "../../db/client.ts";
import { nameKey } from "../../db/name-key.ts";
import { devices, discoveryCandidates, vendors } from "../../db/schema/index.ts";
import { enqueueDeviceJobs, PRIORITY } from "../../platform/jobs/queue.ts";
import { recordActivities, type Actor } from "../../platform/audit/record.ts";
import { deviceRefs, recordEvents } from "../../platform/outbox/record.ts";

export type Candidate = typeof discoveryCandidates.$inferSelect;

/** Why a candidate cannot become a device, or undefined when it can. */
export function notAdoptable(c: Candidate): string | undefined {
  if (c.state === "adopted") return `candidate ${c.id} (${c.address}) is already device ${c.deviceId ?? "(deleted)"}`;
  if (!c.credId)
    return `no credential set logged in to ${c.address}; mark the set that does for discovery and scan again`;
  if (!c.templateId) return `no built-in template recognised ${c.address}; scan again once one does`;
  return undefined;
}

/**
 * Makes devices of candidates, in the caller's transaction: each named after its host name (its address when it
 * gave none, or when the name is taken: "<name>-<address>"), with the template, vendor, model, inventory and
 * port found, bound to the credential set that logged in and set to discover its credentials again should that
 * set stop working; each is queued for a backup. A candidate whose address became a device meanwhile is linked
 * to it, not duplicated. Returns the device id of each candidate, in order.
 */
export async function adoptCandidates(
  tx: DbOrTx,
  list: Candidate[],
  actor: Actor,
  now: Date,
  requestedBy: number | null = null,
): Promise<number[]> {
  if (!list.length) return [];
  const vendorRows = await tx.select({ id: vendors.id, name: vendors.name }).from(vendors);
  const vendorOf = (name: string | null) =>
    vendorRows.find((v) => name && v.name.toLowerCase() === name.toLowerCase())?.id ?? null;
  const existing = await tx
    .select({ id: devices.id, ip: devices.ip })
    .from(devices)
    .where(
      inArray(
        devices.ip,
        list.map((c) => c.address),
      ),
    );
  const deviceIds: number[] = [];
  const created: { id: number; candidate: Candidate }[] = [];
  for (const c of list) {
    const already = existing.find((d) => d.ip === c.address);
    let id = already?.id;
    if (!id) {
      const name = await freeDeviceName(tx, c.hostname || c.address, c.address);
      const defaultPort = c.protocol === "telnet" ? 23 : 22;
      const [row] = await tx
        .insert(devices)
        .values({
          name,
          nameKey: nameKey(name),
          ip: c.address,
          vendorId: vendorOf(c.vendor),
          model: (c.model ?? "").slice(0, 255),
          templateId: c.templateId,
          credId: c.credId,
          discoverCredentials: true,
          portOverride: c.port === defaultPort ? null : c.port,
          serial: c.serial,
          osVersion: c.osVersion,
          hostname: c.hostname,
          inventoryAt: c.foundAt,
          createdAt: now,
          updatedAt: now,
        })
        .returning({ id: devices.id });
      id = row!.id;
      created.push({ id, candidate: c });
    }
    deviceIds.push(id);
    await tx
      .update(discoveryCandidates)
      .set({ state: "adopted", deviceId: id, updatedAt: now })
      .where(eq(discoveryCandidates.id, c.id));
  }
  if (created.length) {
    const refs = await deviceRefs(
      tx,
      created.map((d) => d.id),
    );
    await recordEvents(
      tx,
      created.map(({ id }) => ({ type: "device.created" as const, payload: { device: refs.get(id)! } })),
      now,
    );
    await recordActivities(
      tx,
      actor,
      created.map(({ id, candidate }) => ({
        action: "device.adopt",
        subjectType: "device",
        subjectId: id,
        after: { candidate_id: candidate.id, device_ip: candidate.address, device_cred_id: candidate.credId },
      })),
      now,
    );
    await enqueueDeviceJobs(
      tx,
      {
        type: "download",
        deviceIds: created.map((d) => d.id),
        trigger: "api",
        priority: PRIORITY.api,
        maxAttempts: await deviceJobAttempts(tx),
        requestedBy,
      },
      now,
    );
  }
  return deviceIds;
}

/** `name` when no device has it, else "<name>-<address>", else with a number. */
async function freeDeviceName(tx: DbOrTx, name: string, address: string): Promise<string> {
  for (const tryName of [
    name,
    `${name}-${address}`,
    ...Array.from({ length: 20 }, (_, i) => `${name}-${address}-${i + 2}`),
  ]) {
    const [taken] = await tx
      .select({ id: devices.id })
      .from(devices)
      .where(eq(devices.nameKey, nameKey(tryName)));
    if (!taken) return tryName;
  }
  return `${name}-${address}-${Date.now()}`;
}

/** The devices already at these addresses (discovery reports them instead of scanning them again). */
export async function devicesAt(tx: DbOrTx, addresses: string[]) {
  const rows: { id: number; name: string; ip: string }[] = [];
  for (let i = 0; i < addresses.length; i += 500)
    rows.push(
      ...(await tx
        .select({ id: devices.id, name: devices.name, ip: devices.ip })
        .from(devices)
        .where(inArray(devices.ip, addresses.slice(i, i + 500)))),
    );
  return new Map(rows.map((r) => [r.ip, r]));
}
