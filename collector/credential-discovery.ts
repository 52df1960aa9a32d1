import { and, asc, count, eq, gt, inArray, lt } from "drizzle-orm";
import type { Db, DbOrTx } from "../src/db/client.ts";
import { credentials, devices, discoveryTries } from "../src/db/schema/index.ts";
import { recordActivity } from "../src/platform/audit/record.ts";
import { deviceRef, recordEvent } from "../src/platform/outbox/record.ts";
import type { ConnectionTemplate } from "../src/modules/templates/index.ts";
import type { Progress } from "./collect.ts";
import { SETTINGS_DEFAULTS } from "../src/platform/settings/schema.ts";
import { detectAt, detectEnvOf, PROBE, type Detection } from "./detect-job.ts";
import type { DownloadDeps } from "./download-deps.ts";
import { loginOf } from "./login.ts";
import { SessionError } from "./session.ts";

/**
 * Credential discovery: which credential set logs in to an address. The sets marked for discovery are tried in
 * turn (in id order), on each port that answers, SSH ports before Telnet ones; the first that logs in wins, and
 * the detection its session ran says what the device is. Every failed login is recorded, and an address is not
 * tried again once settings collector.discovery_tries_per_hour failed logins fall within the last hour: a device
 * that locks an account after a few failures never sees that many.
 */

export type CredentialSet = typeof credentials.$inferSelect;
export type DeviceRow = typeof devices.$inferSelect;
export type OpenPort = { port: number; protocol: "ssh" | "telnet" };

/** How long a failed try counts against an address. */
const TRY_WINDOW_MS = 60 * 60_000;

/**
 * The sets discovery tries for a device or an address, in order. `zone` is the seam for zones (sets of the
 * device's zone, once devices have one); today every set marked for discovery is tried, or the ones named.
 */
export async function discoverySets(db: DbOrTx, only?: { credIds?: number[]; zone?: never }): Promise<CredentialSet[]> {
  if (only?.credIds?.length) {
    const rows = await db.select().from(credentials).where(inArray(credentials.id, only.credIds));
    // In the order the preset names them.
    return only.credIds.flatMap((id) => rows.filter((r) => r.id === id));
  }
  return db.select().from(credentials).where(eq(credentials.discovery, true)).orderBy(asc(credentials.id));
}

/** Failed tries against the address within the last hour, and the oldest of them (when it stops counting). */
async function failedTriesWithinHour(db: DbOrTx, address: string, now: Date): Promise<number> {
  await db.delete(discoveryTries).where(lt(discoveryTries.triedAt, new Date(now.getTime() - TRY_WINDOW_MS)));
  const [row] = await db
    .select({ n: count() })
    .from(discoveryTries)
    .where(
      and(eq(discoveryTries.address, address), gt(discoveryTries.triedAt, new Date(now.getTime() - TRY_WINDOW_MS))),
    );
  return row?.n ?? 0;
}

export type LoginFound = { cred: CredentialSet; port: OpenPort; detection: Detection };
export type LoginSearch = { found?: LoginFound; failedTries: number; problem?: string };

/** Open ports in the order they are tried: SSH before Telnet, then by port number. */
export const sshFirst = (ports: OpenPort[]) =>
  [...ports].sort((a, b) => (a.protocol === b.protocol ? a.port - b.port : a.protocol === "ssh" ? -1 : 1));

/**
 * Tries `sets` on `ports` of `address` until one logs in. `device` gives what the address's device already has
 * (its pinned host key, its own template: then its template's way to log in is used instead of a probe); `gate`
 * is awaited before every connection (a scan's connects bound). A set that fails otherwise than by its
 * credentials (a timeout, a prompt not found) is not counted as a failed login.
 */
export async function findWorkingSet(
  deps: DownloadDeps,
  target: {
    address: string;
    ports: OpenPort[];
    sets: CredentialSet[];
    device?: DeviceRow;
    template?: ConnectionTemplate;
    gate?: () => Promise<boolean>;
  },
  signal: AbortSignal,
): Promise<LoginSearch> {
  const max = deps.settings
    ? (await deps.settings()).discovery_tries_per_hour
    : SETTINGS_DEFAULTS.collector.discovery_tries_per_hour;
  let failedTries = 0;
  let problem: string | undefined = target.sets.length ? undefined : "no credential set is marked for discovery";
  for (const port of sshFirst(target.ports)) {
    for (const cred of target.sets) {
      if ((await failedTriesWithinHour(deps.db, target.address, deps.clock.now())) >= max)
        return {
          failedTries,
          problem: `not tried further: ${max} failed logins to ${target.address} within the hour (settings collector.discovery_tries_per_hour)`,
        };
      if (target.gate && !(await target.gate()))
        return { failedTries, problem: "not tried: the scan reached its connection limit" };
      const own: ConnectionTemplate = target.template
        ? { ...target.template, protocol: port.protocol, port: port.port }
        : { ...PROBE, protocol: port.protocol, port: port.port };
      const device = probeDevice(target.address, port.port, target.device);
      try {
        const login = await loginOf(deps.secrets, device, cred);
        const progress: Progress = { connected: false };
        const detection = await detectAt(await detectEnvOf(deps), { device, own, login }, signal, progress);
        return { found: { cred, port, detection }, failedTries };
      } catch (err) {
        if (signal.aborted) throw err;
        if (!(err instanceof SessionError)) throw err;
        if (err.outcome === "auth_failed") {
          failedTries++;
          await deps.db
            .insert(discoveryTries)
            .values({ address: target.address, credId: cred.id, triedAt: deps.clock.now() });
          problem = "no credential set marked for discovery logged in";
          continue;
        }
        // The port does not take this kind of session at all: the next port. That sets were refused elsewhere
        // says more than a fallback port that is closed.
        if (!failedTries) problem = `${port.protocol} on port ${port.port}: ${err.message}`;
        if (err.outcome === "unreachable" || err.outcome === "timeout") break;
      }
    }
  }
  return { failedTries, ...(problem ? { problem } : {}) };
}

/** A device row for a session to an address that is not (yet) a device, or to a device on a port found for it. */
function probeDevice(address: string, port: number, device?: DeviceRow): DeviceRow {
  const now = new Date(0);
  return {
    ...(device ?? {
      id: 0,
      name: address,
      nameKey: address,
      vendorId: null,
      model: "",
      categoryId: null,
      templateId: null,
      credId: null,
      discoverCredentials: false,
      zoneId: 1,
      snippetCredId: null,
      profileId: null,
      username: "",
      passwordEnc: null,
      enablePasswordEnc: null,
      custom: {},
      notes: "",
      enabled: true,
      status: "unknown" as const,
      hostKeyFingerprint: null,
      serial: null,
      osVersion: null,
      hostname: null,
      inventoryAt: null,
      lastSeenAt: null,
      lastBackupAt: null,
      snmpConfigChangedValue: null,
      snmpConfigChangedAt: null,
      lastDownloadJobId: null,
      lastDownloadOutcome: null,
      lastDownloadAt: null,
      createdAt: now,
      updatedAt: now,
    }),
    ip: address,
    portOverride: port,
  };
}

/**
 * Finds the set that now logs in to a device set to discover its credentials, over its template's protocol and
 * port (Telnet on 23 when its SSH port is refused), and remembers it: the device's credential set changes and a
 * device.credentials_discovered event says which set works now. Returns the set, or the search's problem.
 */
export async function rediscoverDeviceCredentials(
  deps: DownloadDeps,
  device: DeviceRow,
  template: ConnectionTemplate,
  signal: AbortSignal,
): Promise<{ cred?: CredentialSet; problem?: string }> {
  const sets = (await discoverySets(deps.db)).filter((s) => s.id !== device.credId);
  const port = device.portOverride ?? template.port;
  const protocol = template.protocol === "telnet" ? "telnet" : "ssh";
  const ports: OpenPort[] = [
    { port, protocol },
    ...(protocol === "ssh" ? [{ port: 23, protocol: "telnet" as const }] : []),
  ];
  const search = await findWorkingSet(deps, { address: device.ip, ports, sets, device, template }, signal);
  if (!search.found) return { problem: search.problem ?? "no credential set marked for discovery logged in" };
  await rememberSet(deps.db, device, search.found, deps.clock.now());
  return { cred: search.found.cred };
}

/** Binds the device to the set that logged in, in one transaction with its event and activity entry. */
async function rememberSet(db: Db, device: DeviceRow, found: LoginFound, now: Date): Promise<void> {
  const templatePort = found.port.protocol === "telnet" ? 23 : 22;
  const portOverride =
    found.port.port === (device.portOverride ?? templatePort) ? device.portOverride : found.port.port;
  await db.transaction(async (tx) => {
    await tx
      .update(devices)
      .set({ credId: found.cred.id, portOverride, updatedAt: now })
      .where(eq(devices.id, device.id));
    const ref = await deviceRef(tx, device.id);
    if (ref)
      await recordEvent(
        tx,
        "device.credentials_discovered",
        {
          device: ref,
          credential_id: found.cred.id,
          credential_name: found.cred.name,
          previous_credential_id: device.credId,
        },
        now,
      );
    await recordActivity(
      tx,
      { system: "credential discovery" },
      {
        action: "device.credentials_discovered",
        subjectType: "device",
        subjectId: device.id,
        before: { device_cred_id: device.credId },
        after: { device_cred_id: found.cred.id },
      },
      now,
    );
  });
}
