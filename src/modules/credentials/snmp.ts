/**
 * SNMPv3 protocols, named exactly as the collector's SNMP library (net-snmp) names its constants
 * (`snmp.AuthProtocols.sha256`, `snmp.PrivProtocols.aes256r`), so a stored value maps to the library 1:1.
 * net-snmp has no AES-192 and two AES-256 key localisations: aes256b (Blumenthal) and aes256r (Reeder,
 * what Cisco and many others use).
 */
export const SNMP_AUTH_PROTOCOLS = ["md5", "sha", "sha224", "sha256", "sha384", "sha512"] as const;
export const SNMP_PRIV_PROTOCOLS = ["des", "aes", "aes256b", "aes256r"] as const;

export type SnmpAuthProtocol = (typeof SNMP_AUTH_PROTOCOLS)[number];
export type SnmpPrivProtocol = (typeof SNMP_PRIV_PROTOCOLS)[number];

/** Spellings people copy from device configs and other tools: "SHA-256", "SHA1", "AES-128". */
const ALIASES: Record<string, string> = { sha1: "sha", aes128: "aes" };

const canonical = (text: string) => {
  const squashed = text
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, "");
  return ALIASES[squashed] ?? squashed;
};

export type Parsed<T> = { value: T } | { problem: string };

export function parseAuthProtocol(text: string): Parsed<SnmpAuthProtocol> {
  const name = canonical(text);
  if ((SNMP_AUTH_PROTOCOLS as readonly string[]).includes(name)) return { value: name as SnmpAuthProtocol };
  return { problem: `'${text}' is not supported; use one of: ${SNMP_AUTH_PROTOCOLS.join(", ")}` };
}

export function parsePrivProtocol(text: string): Parsed<SnmpPrivProtocol> {
  const name = canonical(text);
  if ((SNMP_PRIV_PROTOCOLS as readonly string[]).includes(name)) return { value: name as SnmpPrivProtocol };
  if (name === "aes256") {
    return {
      problem: `'${text}' is ambiguous: use aes256r (Reeder key localisation, as Cisco devices use) or aes256b (Blumenthal)`,
    };
  }
  return { problem: `'${text}' is not supported by the SNMP library; use one of: ${SNMP_PRIV_PROTOCOLS.join(", ")}` };
}
