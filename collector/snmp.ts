import { eq, sql } from "drizzle-orm";
import * as snmp from "net-snmp";
import { credentials, devices, vendors } from "../src/db/schema/index.ts";
import { latestConfigIds } from "../src/modules/configs/index.ts";
import type { SnmpAuthProtocol, SnmpPrivProtocol } from "../src/modules/credentials/index.ts";
import type { Plan } from "./collect.ts";
import type { Clock } from "../src/kernel/clock.ts";
import type { Db } from "../src/db/client.ts";
import type { SecretBox } from "../src/platform/secrets/box.ts";
import { identify, type Identity, type SnmpFamily } from "./snmp-identity.ts";
import { builtinTemplates } from "./builtin-templates.ts";
import type { ConnectionTemplate } from "../src/modules/templates/index.ts";
import { deviceRef, recordEvent } from "../src/platform/outbox/record.ts";

/**
 * The SNMP step before a download (see the `snmp` key in src/modules/templates/template-schema.ts): read the
 * device's identity, fill its empty model and vendor, and decide from the template's config-change OID whether
 * the login can be skipped. SNMP is an optimisation here, never a requirement: whatever goes wrong is reported
 * in the job's result and the download goes on.
 */

const OIDS = {
  sysDescr: "1.3.6.1.2.1.1.1.0",
  sysObjectId: "1.3.6.1.2.1.1.2.0",
  sysUpTime: "1.3.6.1.2.1.1.3.0",
  sysName: "1.3.6.1.2.1.1.5.0",
  /** ENTITY-MIB entPhysicalModelName of entity 1, the chassis on most devices that have the MIB. */
  chassisModel: "1.3.6.1.2.1.47.1.1.1.1.13.1",
};

export const DEFAULT_SNMP_PORT = 161;
/** The custom attribute that gives one device its own SNMP port (NAT, a lab simulator). */
export const SNMP_PORT_ATTRIBUTE = "snmp_port";
const TIMEOUT_MS = 2_000;
const RETRIES = 1;
/**
 * How much longer than the device's uptime the time since the last reading may be before we call it a restart
 * (the counter restarted, so an equal config-change value no longer proves anything). Covers clock skew
 * between collectors.
 */
const RESTART_SLACK_MS = 60_000;

export type SnmpReport = {
  version: "2c" | "3";
  port: number;
  /** Why SNMP gave nothing; the download went on without it. */
  error?: string;
  sys_descr?: string;
  sys_object_id?: string;
  sys_name?: string;
  sys_uptime_s?: number;
  /** What the device says it is (vendor from sysObjectID, model and software version from ENTITY-MIB / sysDescr). */
  vendor?: string;
  model?: string;
  software_version?: string;
  /** What this reading wrote to the device record: only fields that were empty. */
  filled?: { vendor?: string; model?: string };
  config_change?: { oid: string; value: string | null; previous: string | null; verdict: string };
};

export type SnmpPrecheck =
  | {
      skip: false;
      report?: SnmpReport;
      /** The config-change OID's value before the download: saved with the device when the download succeeds. */
      configChanged?: { value: string; readAt: Date };
    }
  | { skip: true; message: string; report: SnmpReport };

/** Where and how to ask an agent; its community or v3 keys are secrets (a remote collector gets it sealed). */
export type SnmpTarget =
  | { host: string; port: number; version: "2c"; community: string }
  | { host: string; port: number; version: "3"; user: snmp.User };

type Deps = { db: Db; secrets: SecretBox; clock: Clock };

/** Whose SNMP agent to ask: a device, and its template when it has one (the template's snmp.port). */
type SnmpSubject = Pick<Plan, "device"> & { template?: Pick<ConnectionTemplate, "snmp"> };

/** What the system group said, and what the device is by it (snmp-identity.ts); `target` is absent when the agent could not be asked. */
export type SnmpSystem = {
  report: SnmpReport;
  target?: SnmpTarget;
  identity?: Identity;
  uptimeTicks?: snmp.VarbindValue;
  readAt?: Date;
};

/**
 * Reads a device's SNMP system group (and ENTITY-MIB's chassis model) when its credential set has SNMP settings;
 * undefined when it has none. A failure is in the report's `error`, never thrown.
 */
export async function readSnmpSystem(
  deps: Deps,
  subject: SnmpSubject,
  families?: { template: SnmpFamily }[],
): Promise<SnmpSystem | undefined> {
  const target = await snmpTargetOf(deps, subject);
  if (!target) return undefined;
  return readSnmpSystemAt(target, families ?? (await builtinTemplates(deps.db)), deps.clock);
}

/** readSnmpSystem with the target already known (a remote collector gets it sealed in the job). */
export async function readSnmpSystemAt(
  target: SnmpTargetOrProblem,
  families: { template: SnmpFamily }[],
  clock: Pick<Clock, "now">,
): Promise<SnmpSystem> {
  const report: SnmpReport = { version: target.version, port: target.port };
  if ("problem" in target) return { report: { ...report, error: target.problem } };

  let system: Map<string, snmp.VarbindValue>;
  try {
    system = await get(target, [OIDS.sysDescr, OIDS.sysObjectId, OIDS.sysUpTime, OIDS.sysName]);
  } catch (err) {
    return { report: { ...report, error: describeFailure(err, target) } };
  }
  const readAt = clock.now();
  const uptimeTicks = system.get(OIDS.sysUpTime);
  Object.assign(report, {
    sys_descr: text(system.get(OIDS.sysDescr)),
    sys_object_id: text(system.get(OIDS.sysObjectId)),
    sys_name: text(system.get(OIDS.sysName)),
    sys_uptime_s: typeof uptimeTicks === "number" ? uptimeTicks / 100 : undefined,
  });
  // Optional objects get requests of their own: an old agent may answer a whole request with an error when
  // one object in it is unknown, and that must not cost the system group.
  const chassisModel = text(
    await get(target, [OIDS.chassisModel]).then(
      (r) => r.get(OIDS.chassisModel),
      () => undefined,
    ),
  );
  // Which vendor and wording a sysObjectID stands for is the built-in templates' knowledge (their detect sections).
  const known = families.map((f) => f.template);
  const identity = identify({ sysObjectId: report.sys_object_id, sysDescr: report.sys_descr, chassisModel }, known);
  Object.assign(report, { vendor: identity.vendor, model: identity.model, software_version: identity.version });
  return { report, target, identity, uptimeTicks, readAt };
}

/**
 * Before a download: read the device's identity over SNMP when its credential set has SNMP settings and, where
 * the template names a config-change OID, skip the download when that value has not moved since the last one.
 */
export async function snmpPrecheck(deps: Deps, plan: Plan): Promise<SnmpPrecheck> {
  const system = await readSnmpSystem(deps, plan);
  if (!system) return { skip: false };
  const { report, target, identity, uptimeTicks, readAt } = system;
  if (!target || !identity || !readAt) return { skip: false, report };
  const filled = await fillIdentity(deps, plan, identity, readAt);
  if (filled) report.filled = filled;

  const oid = plan.template.snmp?.config_changed_oid?.replace(/^\./, "");
  if (!oid) return { skip: false, report };
  const value = text(
    await get(target, [oid]).then(
      (r) => r.get(oid),
      () => undefined,
    ),
  );
  const previous = plan.device.snmpConfigChangedValue;
  const verdict = (v: string) => (report.config_change = { oid, value: value ?? null, previous, verdict: v });
  if (value === undefined) {
    verdict("the agent gave no value for this OID");
    return { skip: false, report };
  }
  const configChanged = { value, readAt };
  if (previous === null) {
    verdict("no value recorded at an earlier download");
  } else if (previous !== value) {
    verdict("changed since the last download");
  } else if (restartedSince(plan.device.snmpConfigChangedAt, uptimeTicks, readAt)) {
    verdict("the device restarted since the last download, so an equal value proves nothing");
  } else {
    const stored = await latestConfigIds(deps.db, plan.device.id, plan.commands);
    const missing = plan.commands.find((c) => !stored.has(c));
    if (missing !== undefined) {
      verdict(`unchanged, but nothing is stored yet for "${missing}"`);
    } else {
      verdict("unchanged since the last download");
      return { skip: true, message: "unchanged, verified by SNMP", report };
    }
  }
  return { skip: false, report, configChanged };
}

/** The job result's `snmp` entry, when SNMP was tried. */
export function snmpResult(precheck: SnmpPrecheck | undefined): { snmp?: SnmpReport } {
  return precheck?.report ? { snmp: precheck.report } : {};
}

/** The device columns a successful download sets: the config-change value read before it (null: none). */
export function configChangedColumns(precheck: SnmpPrecheck) {
  const read = precheck.skip ? undefined : precheck.configChanged;
  return { snmpConfigChangedValue: read?.value ?? null, snmpConfigChangedAt: read?.readAt ?? null };
}

/** A target, or why the device's settings give none (reported, never thrown). */
export type SnmpTargetOrProblem = SnmpTarget | (Pick<SnmpTarget, "version" | "port"> & { problem: string });

/** Where and how to ask, from the device's credential set; undefined when it has no SNMP settings. */
export async function snmpTargetOf(
  deps: Pick<Deps, "db" | "secrets">,
  subject: SnmpSubject,
): Promise<SnmpTargetOrProblem | undefined> {
  const { device, template } = subject;
  if (!device.credId) return undefined;
  const [cred] = await deps.db.select().from(credentials).where(eq(credentials.id, device.credId));
  if (!cred || (!cred.snmpV3User && !cred.snmpCommunityEnc)) return undefined;
  const version = cred.snmpV3User ? "3" : "2c";

  const custom = device.custom[SNMP_PORT_ATTRIBUTE];
  let port = template?.snmp?.port ?? DEFAULT_SNMP_PORT;
  if (custom !== undefined && custom !== null && custom !== "") {
    const n = Number(custom);
    if (!Number.isInteger(n) || n < 1 || n > 65535) {
      return {
        version,
        port,
        problem: `custom attribute ${SNMP_PORT_ATTRIBUTE} must be a port number from 1 to 65535, not ${JSON.stringify(custom)}`,
      };
    }
    port = n;
  }

  const host = device.ip;
  if (version === "2c") return { host, port, version, community: await deps.secrets.decrypt(cred.snmpCommunityEnc!) };
  const authKey = cred.snmpV3AuthPasswordEnc ? await deps.secrets.decrypt(cred.snmpV3AuthPasswordEnc) : undefined;
  const privKey = cred.snmpV3PrivPasswordEnc ? await deps.secrets.decrypt(cred.snmpV3PrivPasswordEnc) : undefined;
  const authProtocol = cred.snmpV3AuthProtocol as SnmpAuthProtocol | null;
  const privProtocol = cred.snmpV3PrivProtocol as SnmpPrivProtocol | null;
  const user: snmp.User = { name: cred.snmpV3User!, level: snmp.SecurityLevel.noAuthNoPriv };
  if (authProtocol && authKey) {
    Object.assign(user, {
      level: snmp.SecurityLevel.authNoPriv,
      authProtocol: snmp.AuthProtocols[authProtocol],
      authKey,
    });
    if (privProtocol && privKey)
      Object.assign(user, {
        level: snmp.SecurityLevel.authPriv,
        privProtocol: snmp.PrivProtocols[privProtocol],
        privKey,
      });
  }
  return { host, port, version, user };
}

/** One GET; per-object exceptions (noSuchObject, noSuchInstance) come back as absent entries. */
function get(target: SnmpTarget, oids: string[]): Promise<Map<string, snmp.VarbindValue>> {
  const options = {
    port: target.port,
    timeout: TIMEOUT_MS,
    retries: RETRIES,
    transport: target.host.includes(":") ? ("udp6" as const) : ("udp4" as const),
  };
  const session =
    target.version === "2c"
      ? snmp.createSession(target.host, target.community, { ...options, version: snmp.Version2c })
      : snmp.createV3Session(target.host, target.user, options);
  return new Promise((resolve, reject) => {
    // The library's own timeout ends every request; this guard only protects against a request it loses.
    const guard = setTimeout(
      () => finish(new Error("the SNMP request never completed")),
      TIMEOUT_MS * (RETRIES + 1) * 2 + 1_000,
    );
    let done = false;
    const finish = (err: unknown, varbinds?: snmp.Varbind[]) => {
      if (done) return; // closing the session may report the cancelled request or a socket error once more
      done = true;
      clearTimeout(guard);
      try {
        session.close();
      } catch {
        // the socket already failed and closed
      }
      if (err) return reject(err);
      const values = new Map<string, snmp.VarbindValue>();
      for (const vb of varbinds ?? []) if (!snmp.isVarbindError(vb)) values.set(vb.oid, vb.value);
      resolve(values);
    };
    session.on("error", (err) => finish(err));
    try {
      session.get(oids, (err, varbinds) => finish(err, varbinds));
    } catch (err) {
      finish(err);
    }
  });
}

function describeFailure(err: unknown, target: SnmpTarget): string {
  const name = err instanceof Error ? err.name : "";
  if (name === "RequestTimedOutError") {
    const hint =
      target.version === "2c" ? "wrong community, or no agent listening" : "no agent listening, or it drops this user";
    return `no answer from ${target.host}:${target.port} within ${TIMEOUT_MS} ms (${RETRIES + 1} tries; ${hint})`;
  }
  return `SNMP request failed: ${err instanceof Error ? err.message : String(err)}`;
}

/** OCTET STRINGs as text when they are text, else hex ("0x07e8..." for a DateAndTime); numbers and OIDs as written. */
function text(value: snmp.VarbindValue): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (Buffer.isBuffer(value)) {
    const decoded = value.toString("utf8");
    return /^[\P{Cc}\t\r\n]*$/u.test(decoded) && !decoded.includes("\uFFFD") ? decoded : `0x${value.toString("hex")}`;
  }
  return String(value);
}

/** sysUpTime counts from the agent's start: less time than has passed since the last reading means a restart. */
function restartedSince(lastReadAt: Date | null, uptimeTicks: snmp.VarbindValue, now: Date): boolean {
  if (!lastReadAt || typeof uptimeTicks !== "number") return false;
  return now.getTime() - lastReadAt.getTime() > uptimeTicks * 10 + RESTART_SLACK_MS;
}

/** Writes the model and vendor the device reports where the record has none; the user's values are kept. */
async function fillIdentity(deps: Deps, plan: Plan, identity: Identity, now: Date) {
  const filled: NonNullable<SnmpReport["filled"]> = {};
  const update: { model?: string; vendorId?: number } = {};
  if (!plan.device.model && identity.model) update.model = filled.model = identity.model.slice(0, 255);
  if (plan.device.vendorId === null && identity.vendor) {
    const [vendor] = await deps.db
      .select()
      .from(vendors)
      .where(eq(sql`lower(${vendors.name})`, identity.vendor.toLowerCase()));
    if (vendor) {
      update.vendorId = vendor.id;
      filled.vendor = vendor.name;
    }
  }
  if (!Object.keys(update).length) return undefined;
  // As the API names the fields in a device.updated event (src/modules/devices/service.ts).
  const changed = [
    ...(update.vendorId !== undefined ? ["device_vendor", "device_vendor_id"] : []),
    ...(update.model !== undefined ? ["device_model"] : []),
  ];
  await deps.db.transaction(async (tx) => {
    await tx
      .update(devices)
      .set({ ...update, updatedAt: now })
      .where(eq(devices.id, plan.device.id));
    const ref = await deviceRef(tx, plan.device.id);
    if (ref) await recordEvent(tx, "device.updated", { device: ref, changed }, now);
  });
  return filled;
}
