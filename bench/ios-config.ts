/**
 * Plausible Cisco IOS command output for the simulated devices of bench/collect.ts: a running configuration of
 * a chosen size (stacked access switch: VLANs, access ports, SVIs, OSPF, extended ACLs, AAA, SNMP, lines) and
 * short `show version` / `show vtp status` / `show inventory` answers. Deterministic per device index and
 * different from one device to the next, so stored blobs do not deduplicate across devices (as real configs
 * would not). Lines end with "\r\n", as a device's terminal sends them.
 */

const EOL = "\r\n";

/** A cheap, stable mix of two integers: every device gets its own addresses, names and port layout. */
const mix = (a: number, b: number) => {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35);
  h ^= h >>> 13;
  h = Math.imul(h, 0x27d4eb2f);
  return (h ^ (h >>> 16)) >>> 0;
};

const SITES = ["ams", "fra", "lon", "par", "mad", "nyc", "iad", "sjc", "sin", "tyo"];
const ROLES = ["users", "voice", "printers", "cameras", "guests", "mgmt", "servers", "iot", "lab", "wifi"];
const SERVICES = [
  ["tcp", "443"],
  ["tcp", "22"],
  ["udp", "53"],
  ["tcp", "389"],
  ["udp", "123"],
  ["tcp", "8443"],
  ["udp", "161"],
  ["tcp", "3389"],
];

export const hostnameOf = (index: number) =>
  `bench-${SITES[index % SITES.length]}-sw${String(index + 1).padStart(4, "0")}`;

const wildcard = (bits: number) => {
  const host = 32 - bits;
  const m = host === 32 ? 0xffffffff : (1 << host) - 1;
  return [24, 16, 8, 0].map((s) => (m >>> s) & 255).join(".");
};

function header(index: number): string[] {
  const host = hostnameOf(index);
  const site = SITES[index % SITES.length]!;
  const day = 1 + (mix(index, 1) % 28);
  return [
    "!",
    `! Last configuration change at 09:${String(mix(index, 2) % 60).padStart(2, "0")}:14 CET Mon Mar ${day} 2025 by netadmin`,
    `! NVRAM config last updated at 09:${String(mix(index, 3) % 60).padStart(2, "0")}:20 CET Mon Mar ${day} 2025 by netadmin`,
    "!",
    "version 15.2",
    "no service pad",
    "service timestamps debug datetime msec localtime show-timezone",
    "service timestamps log datetime msec localtime show-timezone",
    "service password-encryption",
    "service sequence-numbers",
    "!",
    `hostname ${host}`,
    "!",
    "boot-start-marker",
    "boot-end-marker",
    "!",
    "logging buffered 64000 informational",
    "no logging console",
    `enable secret 9 $9$${(mix(index, 4) >>> 0).toString(36)}$kq0b8HqvCq1vkNHl9OzYx3cd3PZkM6rXfD2ZlCT6Yfg`,
    "!",
    `username netadmin privilege 15 secret 9 $9$${(mix(index, 5) >>> 0).toString(36)}$V1Kc8m0xJUd1oB4WkqF9cWqpxv5Gz0lCYoYQaJm7c2Q`,
    "aaa new-model",
    "!",
    "aaa group server tacacs+ TACACS-GROUP",
    " server name tacacs-1",
    " server name tacacs-2",
    " ip tacacs source-interface Vlan900",
    "!",
    "aaa authentication login default group TACACS-GROUP local",
    "aaa authorization exec default group TACACS-GROUP local",
    "aaa accounting exec default start-stop group TACACS-GROUP",
    "aaa accounting commands 15 default start-stop group TACACS-GROUP",
    "!",
    "aaa session-id common",
    "clock timezone CET 1 0",
    "clock summer-time CEST recurring last Sun Mar 2:00 last Sun Oct 3:00",
    "switch 1 provision ws-c3850-48p",
    "switch 2 provision ws-c3850-48p",
    "!",
    `ip domain name ${site}.corp.example.net`,
    "ip name-server 10.255.0.53 10.255.1.53",
    "ip dhcp snooping",
    "ip arp inspection vlan 10-99",
    "login on-success log",
    "vtp mode transparent",
    "!",
    "crypto pki trustpoint TP-self-signed-1234567890",
    " enrollment selfsigned",
    " subject-name cn=IOS-Self-Signed-Certificate-1234567890",
    " revocation-check none",
    "!",
    "spanning-tree mode rapid-pvst",
    "spanning-tree extend system-id",
    "spanning-tree portfast bpduguard default",
    "!",
    "redundancy",
    " mode sso",
    "!",
  ];
}

function vlans(index: number, count: number): string[] {
  const out: string[] = [];
  for (let v = 0; v < count; v++) {
    out.push(
      `vlan ${10 + v}`,
      ` name ${ROLES[(v + index) % ROLES.length]}-${SITES[index % SITES.length]}-${10 + v}`,
      "!",
    );
  }
  return out;
}

function accessPort(index: number, port: number, vlanCount: number): string[] {
  const member = 1 + Math.floor(port / 48);
  const vlan = 10 + (mix(index, port) % vlanCount);
  const role = ROLES[(vlan - 10 + index) % ROLES.length]!;
  return [
    `interface GigabitEthernet${member}/0/${(port % 48) + 1}`,
    ` description ${role} desk ${member}.${String((port % 48) + 1).padStart(2, "0")} room ${100 + (mix(index, port + 7) % 400)}`,
    ` switchport access vlan ${vlan}`,
    " switchport mode access",
    ...(role === "voice" ? [` switchport voice vlan ${10 + ((vlan - 9) % vlanCount)}`] : []),
    " switchport port-security maximum 3",
    " switchport port-security violation restrict",
    " switchport port-security",
    " storm-control broadcast level 5.00",
    " storm-control action trap",
    " spanning-tree portfast",
    " spanning-tree bpduguard enable",
    " ip dhcp snooping limit rate 20",
    "!",
  ];
}

function svis(index: number, vlanCount: number): string[] {
  const out: string[] = [];
  const second = index % 250;
  for (let v = 0; v < vlanCount; v++) {
    out.push(
      `interface Vlan${10 + v}`,
      ` description gateway ${ROLES[(v + index) % ROLES.length]}`,
      ` ip address 10.${second}.${v}.1 255.255.255.0`,
      " ip helper-address 10.255.0.67",
      " ip helper-address 10.255.1.67",
      " no ip redirects",
      " no ip proxy-arp",
      ` ip access-group ACL-VLAN${10 + v}-IN in`,
      "!",
    );
  }
  out.push(
    "interface Vlan900",
    " description management",
    ` ip address 10.254.${second}.${(index % 200) + 10} 255.255.255.0`,
    "!",
    "router ospf 1",
    ` router-id 10.254.${second}.${(index % 200) + 10}`,
    " passive-interface default",
    " no passive-interface Vlan900",
    ` network 10.${second}.0.0 0.0.255.255 area 0.0.0.${index % 16}`,
    ` network 10.254.${second}.0 0.0.0.255 area 0`,
    "!",
  );
  return out;
}

function aclEntry(index: number, acl: number, seq: number): string {
  const h = mix(index * 131 + acl, seq);
  const [proto, port] = SERVICES[h % SERVICES.length]!;
  const bits = [24, 28, 32][h % 3]!;
  const source = `10.${index % 250}.${acl % 64}.${bits === 24 ? 0 : (h >>> 8) & 240}`;
  const dest = `172.${16 + ((h >>> 4) % 16)}.${(h >>> 12) & 255}.${(h >>> 20) & 255}`;
  const action = h % 11 === 0 ? "deny  " : "permit";
  const src = bits === 32 ? `host ${source}` : `${source} ${wildcard(bits)}`;
  return ` ${seq * 10} ${action} ${proto} ${src} host ${dest} eq ${port}${h % 7 === 0 ? " log" : ""}`;
}

function trailer(index: number): string[] {
  const site = SITES[index % SITES.length]!;
  return [
    "ip forward-protocol nd",
    "no ip http server",
    "no ip http secure-server",
    "ip ssh version 2",
    "ip ssh source-interface Vlan900",
    "ip tacacs source-interface Vlan900",
    "!",
    "logging trap notifications",
    "logging source-interface Vlan900",
    "logging host 10.255.0.14",
    "access-list 99 permit 10.254.0.0 0.0.255.255",
    "access-list 99 deny   any log",
    `snmp-server community n3tk33p-${(mix(index, 9) % 100000).toString(36)} RO 99`,
    `snmp-server location ${site} building ${1 + (index % 5)} floor ${index % 12} rack ${index % 40}`,
    "snmp-server contact noc@example.net",
    "snmp-server enable traps snmp linkdown linkup coldstart warmstart",
    "snmp-server host 10.255.0.162 version 2c n3tk33p-traps",
    "!",
    "tacacs server tacacs-1",
    " address ipv4 10.255.0.49",
    ` key 7 ${(mix(index, 10) >>> 0).toString(16).toUpperCase()}0A1F1C`,
    "tacacs server tacacs-2",
    " address ipv4 10.255.1.49",
    ` key 7 ${(mix(index, 11) >>> 0).toString(16).toUpperCase()}0A1F1C`,
    "!",
    "banner motd ^C",
    "  Authorised access only. Activity is logged.",
    "^C",
    "!",
    "line con 0",
    " exec-timeout 15 0",
    " logging synchronous",
    " stopbits 1",
    "line vty 0 4",
    " access-class 99 in",
    " exec-timeout 15 0",
    " logging synchronous",
    " transport input ssh",
    "line vty 5 15",
    " access-class 99 in",
    " exec-timeout 15 0",
    " transport input ssh",
    "!",
    "ntp server 10.255.0.123 prefer",
    "ntp server 10.255.1.123",
    "!",
    "end",
  ];
}

/**
 * `show running-config` as the device prints it (without echo and prompt), about `bytes` long: the fixed parts,
 * then VLANs, access ports, SVIs and ACL entries in the proportions of an access switch, ACLs filling up the rest.
 */
export function iosRunningConfig(index: number, bytes: number): string {
  const vlanCount = Math.max(4, Math.min(90, Math.round(bytes / 5000)));
  const ports = Math.max(8, Math.round((bytes * 0.45) / 420));
  const head = header(index);
  const body: string[] = [...vlans(index, vlanCount)];
  for (let p = 0; p < ports; p++) body.push(...accessPort(index, p, vlanCount));
  body.push(...svis(index, vlanCount));
  const tail = trailer(index);
  let size = [...head, ...body, ...tail].reduce((n, l) => n + l.length + EOL.length, 0);
  // ACLs, one per VLAN in turn, until the text reaches the size asked for.
  for (let acl = 0; size < bytes; acl++) {
    const name = `ip access-list extended ACL-VLAN${10 + (acl % vlanCount)}-IN${acl >= vlanCount ? `-${Math.floor(acl / vlanCount)}` : ""}`;
    body.push(name);
    size += name.length + EOL.length;
    for (let seq = 1; seq <= 40 && size < bytes; seq++) {
      const entry = aclEntry(index, acl, seq);
      body.push(entry);
      size += entry.length + EOL.length;
    }
    body.push("!");
    size += 1 + EOL.length;
  }
  const text = [...head, ...body, ...tail].join(EOL);
  return ["Building configuration...", "", `Current configuration : ${text.length} bytes`, text].join(EOL);
}

export function iosShowVersion(index: number): string {
  const serial = `FOC${(mix(index, 20) % 10_000_000).toString().padStart(7, "0")}X${index % 10}`;
  const days = mix(index, 21) % 700;
  return [
    "Cisco IOS Software, Catalyst L3 Switch Software (CAT3K_CAA-UNIVERSALK9-M), Version 16.12.10a, RELEASE SOFTWARE (fc1)",
    "Technical Support: http://www.cisco.com/techsupport",
    "Copyright (c) 1986-2023 by Cisco Systems, Inc.",
    "Compiled Thu 15-Jun-23 09:41 by mcpre",
    "",
    "ROM: IOS-XE ROMMON",
    "BOOTLDR: CAT3K_CAA Boot Loader (CAT3K_CAA-HBOOT-M) Version 4.78, RELEASE SOFTWARE (P)",
    "",
    `${hostnameOf(index)} uptime is ${Math.floor(days / 7)} weeks, ${days % 7} days, ${mix(index, 22) % 24} hours, ${mix(index, 23) % 60} minutes`,
    "Uptime for this control processor is 1 year, 4 weeks, 2 days, 3 hours, 11 minutes",
    "System returned to ROM by Power Failure or Unknown at 02:17:05 CET Tue Jan 9 2024",
    "System restarted at 02:19:30 CET Tue Jan 9 2024",
    'System image file is "flash:packages.conf"',
    "",
    "cisco WS-C3850-48P (MIPS) processor (revision AB0) with 795904K/6147K bytes of memory.",
    `Processor board ID ${serial}`,
    "2 Virtual Ethernet interfaces",
    "104 Gigabit Ethernet interfaces",
    "8 Ten Gigabit Ethernet interfaces",
    "2048K bytes of non-volatile configuration memory.",
    "4194304K bytes of physical memory.",
    "",
    "Switch Ports Model              SW Version        SW Image              Mode",
    "------ ----- -----              ----------        ----------            ----",
    "*    1 56    WS-C3850-48P       16.12.10a         CAT3K_CAA-UNIVERSALK9 INSTALL",
    "     2 56    WS-C3850-48P       16.12.10a         CAT3K_CAA-UNIVERSALK9 INSTALL",
    "",
    "Configuration register is 0x102",
  ].join(EOL);
}

export function iosVtpStatus(index: number): string {
  return [
    "VTP Version capable             : 1 to 3",
    "VTP version running             : 1",
    `VTP Domain Name                 : ${SITES[index % SITES.length]}`,
    "VTP Pruning Mode                : Disabled",
    "VTP Traps Generation            : Disabled",
    `Device ID                       : 00a3.8e${(mix(index, 30) & 0xff).toString(16).padStart(2, "0")}.7f00`,
    "Configuration last modified by 0.0.0.0 at 0-0-00 00:00:00",
    "",
    "Feature VLAN:",
    "--------------",
    "VTP Operating Mode                : Transparent",
    "Maximum VLANs supported locally   : 1005",
    "Number of existing VLANs          : 42",
    "Configuration Revision            : 0",
  ].join(EOL);
}

export function iosInventory(index: number): string {
  const sn = (k: number) => `FOC${(mix(index, 40 + k) % 10_000_000).toString().padStart(7, "0")}X${k}`;
  return [
    'NAME: "c38xx Stack", DESCR: "c38xx Stack"',
    `PID: WS-C3850-48P     , VID: V07  , SN: ${sn(0)}`,
    "",
    'NAME: "Switch 1", DESCR: "WS-C3850-48P"',
    `PID: WS-C3850-48P     , VID: V07  , SN: ${sn(1)}`,
    "",
    'NAME: "Switch 1 - Power Supply A", DESCR: "Switch 1 - Power Supply A"',
    `PID: PWR-C1-715WAC    , VID: V02  , SN: ${sn(2)}`,
    "",
    'NAME: "Switch 2", DESCR: "WS-C3850-48P"',
    `PID: WS-C3850-48P     , VID: V07  , SN: ${sn(3)}`,
  ].join(EOL);
}
