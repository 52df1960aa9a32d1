/**
 * The one table that says what Oxidized's models and RANCID's device types are in netkeep: a vendor (one of
 * the seeded vendor names) and a built-in connection template (collector/templates/<key>.yaml), or no
 * template where netkeep has none for that OS yet. Names are matched in any case.
 */
export type DeviceFamily = {
  vendor: string;
  /** templates.builtin_key; null where no built-in template fits, so the device is imported without one. */
  template: string | null;
  /** Oxidized model names (lib/oxidized/model/<name>.rb), plus the aliases of Oxidized's default model_map. */
  oxidized: string[];
  /** RANCID router.db device types. */
  rancid: string[];
};

export const DEVICE_FAMILIES: DeviceFamily[] = [
  { vendor: "Cisco", template: "cisco-ios", oxidized: ["ios", "iosxe", "cisco"], rancid: ["cisco"] },
  { vendor: "Cisco", template: "cisco-nxos", oxidized: ["nxos"], rancid: ["cisco-nx"] },
  { vendor: "Cisco", template: "cisco-asa", oxidized: ["asa"], rancid: [] },
  { vendor: "Cisco", template: "cisco-iosxr", oxidized: ["iosxr"], rancid: ["cisco-xr"] },
  { vendor: "Juniper", template: "juniper-junos", oxidized: ["junos", "juniper"], rancid: ["juniper"] },
  { vendor: "Arista", template: "arista-eos", oxidized: ["eos"], rancid: ["arista"] },
  { vendor: "MikroTik", template: "mikrotik-routeros", oxidized: ["routeros"], rancid: ["mikrotik"] },
  { vendor: "Fortinet", template: "fortinet-fortios", oxidized: ["fortios"], rancid: ["fortigate"] },
  { vendor: "Aruba", template: "aruba-aoscx", oxidized: ["aoscx"], rancid: [] },
  { vendor: "Aruba", template: "aruba-instant", oxidized: ["arubainstant"], rancid: [] },
  { vendor: "Aruba", template: "aruba-aosw", oxidized: ["aosw"], rancid: [] },
  { vendor: "HPE", template: "hpe-comware", oxidized: ["comware"], rancid: [] },
  { vendor: "HPE", template: "hpe-procurve", oxidized: ["procurve"], rancid: ["hp"] },
  { vendor: "H3C", template: "hpe-comware", oxidized: [], rancid: ["h3c"] },
  { vendor: "Netgear", template: "netgear", oxidized: ["netgear"], rancid: [] },
  { vendor: "VyOS", template: "vyos", oxidized: ["vyos", "vyatta"], rancid: [] },
  { vendor: "OPNsense", template: "opnsense", oxidized: ["opnsense"], rancid: [] },
  { vendor: "Netgate", template: "netgate-tnsr", oxidized: ["tnsr"], rancid: [] },
  { vendor: "Netgate", template: "netgate-pfsense", oxidized: ["pfsense"], rancid: [] },
  { vendor: "Linux", template: "linux-generic", oxidized: ["linuxgeneric"], rancid: [] },
  { vendor: "NVIDIA", template: "cumulus-nvue", oxidized: ["cumulus"], rancid: [] },
  { vendor: "SONiC", template: "sonic-sonic", oxidized: ["sonic"], rancid: [] },
  { vendor: "Ubiquiti", template: "ubiquiti-edgeos", oxidized: ["edgeos"], rancid: [] },
  { vendor: "Ubiquiti", template: "ubiquiti-edgeswitch", oxidized: ["edgeswitch"], rancid: [] },
  { vendor: "TP-Link", template: "tplink-jetstream", oxidized: ["tplink"], rancid: [] },
  { vendor: "FS.com", template: "fs-fsos", oxidized: ["fsos"], rancid: [] },
  { vendor: "Nokia", template: "nokia-sros", oxidized: ["sros", "timos"], rancid: [] },
  { vendor: "Allied Telesis", template: "alliedtelesis-awplus", oxidized: ["awplus"], rancid: [] },
  { vendor: "F5", template: "f5-tmos", oxidized: ["tmos"], rancid: ["f5"] },
  { vendor: "Adtran", template: "adtran-aos", oxidized: ["adtran"], rancid: [] },
  { vendor: "Citrix", template: "citrix-adc", oxidized: ["netscaler"], rancid: [] },
  { vendor: "Opengear", template: "opengear-cms", oxidized: ["opengear"], rancid: [] },
  { vendor: "Alcatel-Lucent Enterprise", template: "alcatel-omniswitch", oxidized: ["aos", "aos7"], rancid: [] },
  { vendor: "Zyxel", template: "zyxel-zynos", oxidized: ["zynos"], rancid: [] },
  { vendor: "Huawei", template: "huawei-vrp", oxidized: ["vrp"], rancid: [] },
  { vendor: "Dell", template: "dell-os10", oxidized: ["os10"], rancid: [] },
  { vendor: "Dell", template: "dell-os9", oxidized: ["ftos", "dnos"], rancid: ["force10"] },
  { vendor: "Dell", template: "dell-os6", oxidized: ["powerconnect", "efos", "quantaos"], rancid: [] },
  { vendor: "Extreme Networks", template: "extreme-exos", oxidized: ["xos"], rancid: ["extreme"] },
  { vendor: "Extreme Networks", template: "extreme-voss", oxidized: ["voss"], rancid: [] },
  { vendor: "Brocade", template: "brocade-ironware", oxidized: ["ironware"], rancid: ["foundry"] },
  { vendor: "NVIDIA", template: "nvidia-onyx", oxidized: ["mlnxos"], rancid: [] },
  { vendor: "SonicWall", template: "sonicwall-sonicos", oxidized: ["sonicos"], rancid: [] },
  { vendor: "WatchGuard", template: "watchguard-fireware", oxidized: ["firewareos", "fireware"], rancid: [] },
  { vendor: "Ciena", template: "ciena-saos", oxidized: ["saos"], rancid: [] },
  { vendor: "Eaton", template: "eaton-network", oxidized: ["eatonnetwork", "eaton_network"], rancid: [] },
  { vendor: "ZTE", template: "zte-zxa10", oxidized: ["zteolt"], rancid: [] },
  { vendor: "APC", template: "apc-nmc", oxidized: ["apc", "apc_aos", "apcaos"], rancid: [] },
  { vendor: "Palo Alto Networks", template: "paloalto-panos", oxidized: ["panos"], rancid: [] },
  { vendor: "Check Point", template: "checkpoint-gaia", oxidized: ["gaiaos"], rancid: [] },
  { vendor: "Juniper", template: "juniper-screenos", oxidized: ["screenos"], rancid: ["netscreen"] },
  { vendor: "Cisco", template: "cisco-ftd", oxidized: ["firelinuxos"], rancid: [] },
  { vendor: "Cisco", template: "cisco-smb", oxidized: ["ciscosmb", "ciscocbs"], rancid: [] },
  { vendor: "Cisco", template: "cisco-aireos", oxidized: ["aireos"], rancid: ["cisco-wlc4", "cisco-wlc5"] },
];

export type InventorySource = "oxidized" | "rancid";

const index = (source: InventorySource) =>
  new Map(DEVICE_FAMILIES.flatMap((family) => family[source].map((name) => [name, family] as const)));
const BY_SOURCE = { oxidized: index("oxidized"), rancid: index("rancid") };

export const familyOf = (source: InventorySource, model: string): DeviceFamily | undefined =>
  BY_SOURCE[source].get(model.toLowerCase());

/** Every name a source may use, sorted, for the message that rejects an unknown one. */
export const knownModels = (source: InventorySource): string[] => [...BY_SOURCE[source].keys()].sort();
