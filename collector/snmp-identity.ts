/**
 * What a device's SNMP system group says it is. Pure: the vendor from the IANA enterprise number in
 * sysObjectID, the model and software version from the vendor's usual sysDescr wording.
 */

/** Enterprise numbers (1.3.6.1.4.1.<n>) of the vendors netkeep seeds, by the seeded vendor name. */
const ENTERPRISES: ReadonlyMap<number, string> = new Map([
  [9, "Cisco"],
  [2636, "Juniper"],
  [30065, "Arista"],
  [14988, "MikroTik"],
  [12356, "Fortinet"],
  [14823, "Aruba"], // Aruba Networks (ArubaOS, Instant)
  [47196, "Aruba"], // Hewlett Packard Enterprise's Aruba (AOS-CX)
  [11, "HPE"], // Hewlett-Packard (ProCurve / ArubaOS-Switch)
  [25506, "H3C"], // also HPE's Comware switches
  [4526, "Netgear"],
  [8072, "Linux"], // the net-snmp agent: Linux, and appliances built on it
  [2021, "Linux"], // UCD-SNMP, net-snmp's predecessor
]);

type Wording = { model?: RegExp[]; version?: RegExp[] };

/** How each vendor words sysDescr; the first group of the first matching pattern wins. */
const WORDING: Record<string, Wording> = {
  // "Cisco IOS Software, C2960 Software (C2960-LANBASEK9-M), Version 15.0(2)SE, RELEASE SOFTWARE (fc1)"
  // "Cisco IOS Software [Amsterdam], Catalyst L3 Switch Software (CAT9K_IOSXE), Version 17.3.4, ..."
  // "Cisco NX-OS(tm) n9000, Software (n9000-dk9), Version 9.3(8), RELEASE SOFTWARE"
  // "Cisco Adaptive Security Appliance Version 9.8(4)"
  Cisco: {
    model: [/^Cisco IOS Software(?: \[[^\]]*\])?, (.+?) Software \(/, /^Cisco NX-OS\(tm\) ([^,]+),/],
    version: [/\bVersion ([^\s,]+)/],
  },
  // "Juniper Networks, Inc. mx480 internet router, kernel JUNOS 15.1R7.9, Build date: ..."
  Juniper: { model: [/^Juniper Networks, Inc\. (\S+)/], version: [/\bJUNOS ([^\s,]+)/] },
  // "Arista Networks EOS version 4.24.2F running on an Arista Networks DCS-7050TX-64"
  Arista: { model: [/running on an? Arista Networks (\S+)/], version: [/\bEOS version (\S+)/] },
  // "RouterOS CCR1036-8G-2S+"
  MikroTik: { model: [/^RouterOS (\S+)/] },
  // "Aruba JL658A 6300M 24SFP+ 4SFP56 Swch FL.10.08.1021"
  Aruba: { model: [/^Aruba (\w+) /], version: [/\b([A-Z]{2}\.\d+\.\d+\.\d+)\b/] },
  // "H3C Comware Platform Software, Software Version 7.1.064, Release 0427P22\r\nH3C S6850-56HF\r\nCopyright ..."
  H3C: { model: [/^(?:H3C|HPE?) (?!Comware)(.+?)\s*$/m], version: [/\bSoftware Version ([^\s,]+(?:, Release \S+)?)/] },
  // "Linux edge-01 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01) x86_64"
  Linux: { version: [/^Linux \S+ (\S+)/] },
};

export type Identity = { vendor?: string; model?: string; version?: string };

const first = (patterns: RegExp[] | undefined, text: string) => {
  for (const p of patterns ?? []) {
    const found = p.exec(text)?.[1]?.trim();
    if (found) return found;
  }
  return undefined;
};

/** The enterprise number of an OID under 1.3.6.1.4.1, e.g. 9 for 1.3.6.1.4.1.9.1.1208. */
export function enterpriseOf(sysObjectId: string): number | undefined {
  const m = /^\.?1\.3\.6\.1\.4\.1\.(\d+)(?:\.|$)/.exec(sysObjectId);
  return m ? Number(m[1]) : undefined;
}

/**
 * The vendor (a seeded vendor name), model and software version a device reports. `chassisModel` is
 * ENTITY-MIB's entPhysicalModelName of the chassis, the exact part number, preferred to sysDescr's wording.
 */
export function identify(sys: { sysObjectId?: string; sysDescr?: string; chassisModel?: string }): Identity {
  const enterprise = sys.sysObjectId ? enterpriseOf(sys.sysObjectId) : undefined;
  const vendor = enterprise === undefined ? undefined : ENTERPRISES.get(enterprise);
  const wording = vendor ? WORDING[vendor] : undefined;
  const descr = sys.sysDescr ?? "";
  const model = sys.chassisModel?.trim() || first(wording?.model, descr);
  const version = first(wording?.version, descr);
  return { ...(vendor && { vendor }), ...(model && { model }), ...(version && { version }) };
}
