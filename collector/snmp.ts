import type { Db } from "../src/db/client.ts";

export type SnmpPrecheck = { skip: false } | { skip: true; message: string };

/**
 * Before a download: read the device's identity over SNMP and, where the template names a config-change OID,
 * decide whether the configuration can have changed since the last stored version.
 */
export async function snmpPrecheck(_db: Db, _plan: unknown): Promise<SnmpPrecheck> {
  return { skip: false };
}
