/**
 * The texts of bench/estate.ts: a device's first running configuration (bench/ios-config.ts), the edits a night
 * may bring (an interface, ACL entries, a local user, NTP and SNMP servers, a logging host), and a `show version`
 * whose uptime moves every night (volatile) and whose image changes on an upgrade. Deterministic per device and
 * day, so a resumed build and the git side see the same texts.
 */
import { mulberry32 } from "../src/kernel/random.ts";
import { iosRunningConfig } from "./ios-config.ts";

export const RUNNING = "show running-config";
export const VERSION = "show version";

export function firstRunning(index: number, bytes: number): string {
  return `${iosRunningConfig(index, bytes).split("\r\n").slice(3).join("\n")}\n`;
}

type Edit = (lines: string[], rnd: () => number) => void;
const pick = <T>(items: readonly T[], rnd: () => number) => items[Math.floor(rnd() * items.length)]!;
const indexesOf = (lines: string[], test: (l: string) => boolean) => lines.flatMap((l, i) => (test(l) ? [i] : []));
const octet = (rnd: () => number) => Math.floor(rnd() * 250) + 1;

/** Inserts `line` after the last line starting with `prefix`, or at the end. */
const afterLast = (lines: string[], prefix: string, line: string) => {
  const at = indexesOf(lines, (l) => l.startsWith(prefix)).at(-1) ?? lines.length - 1;
  lines.splice(at + 1, 0, line);
};

const EDITS: Edit[] = [
  (lines, rnd) => {
    const at = indexesOf(lines, (l) => l.startsWith(" description "));
    if (at.length)
      lines[pick(at, rnd)] =
        ` description ${pick(["printer", "ap", "camera", "desk", "uplink", "spare"], rnd)} ${Math.floor(rnd() * 900) + 100} per CHG${Math.floor(rnd() * 90000) + 10000}`;
  },
  (lines, rnd) => {
    const at = indexesOf(lines, (l) => l.startsWith(" switchport access vlan "));
    if (at.length) lines[pick(at, rnd)] = ` switchport access vlan ${10 + Math.floor(rnd() * 20)}`;
  },
  (lines, rnd) => {
    const at = indexesOf(lines, (l) => l.startsWith("interface GigabitEthernet"));
    if (at.length) {
      const i = pick(at, rnd);
      if (lines[i + 1] === " shutdown") lines.splice(i + 1, 1);
      else lines.splice(i + 1, 0, " shutdown");
    }
  },
  (lines, rnd) => {
    const at = indexesOf(lines, (l) => /^ \d+ (permit|deny)/.test(l));
    if (!at.length) return;
    const i = pick(at, rnd);
    const seq = Number(lines[i]!.trim().split(" ")[0]) + 1;
    lines.splice(
      i + 1,
      0,
      ` ${seq} permit tcp 10.${octet(rnd)}.${octet(rnd)}.0 0.0.0.255 host 172.16.${octet(rnd)}.${octet(rnd)} eq ${pick(["443", "8080", "22", "5060"], rnd)}`,
    );
  },
  (lines, rnd) => {
    const at = indexesOf(lines, (l) => /^ \d+ (permit|deny)/.test(l));
    if (at.length > 5) lines.splice(pick(at, rnd), 1);
  },
  (lines, rnd) => {
    const users = indexesOf(lines, (l) => l.startsWith("username "));
    if (users.length > 3 && rnd() < 0.5) lines.splice(pick(users, rnd), 1);
    else
      afterLast(
        lines,
        "username ",
        `username ${pick(["jdoe", "asmith", "mkhan", "lchen", "ops", "noc"], rnd)}${Math.floor(rnd() * 100)} privilege 15 secret 9 <removed>`,
      );
  },
  (lines, rnd) => {
    const ntp = indexesOf(lines, (l) => l.startsWith("ntp server "));
    if (ntp.length > 1 && rnd() < 0.5) lines.splice(pick(ntp, rnd), 1);
    afterLast(lines, "ntp server ", `ntp server 10.255.${octet(rnd)}.${octet(rnd)}`);
  },
  (lines, rnd) => {
    const hosts = indexesOf(lines, (l) => l.startsWith("snmp-server host "));
    if (hosts.length > 1 && rnd() < 0.5) lines.splice(pick(hosts, rnd), 1);
    afterLast(lines, "snmp-server host ", `snmp-server host 10.254.${octet(rnd)}.${octet(rnd)} version 3 priv nms`);
  },
  (lines, rnd) => afterLast(lines, "logging host ", `logging host 10.253.${octet(rnd)}.${octet(rnd)}`),
];

/** The next night's running configuration of a device whose configuration changed that day. */
export function editRunning(previous: string, index: number, day: number): string {
  const rnd = mulberry32(index * 7919 + day * 104_729 + 17);
  const lines = previous.replace(/\n$/, "").split("\n");
  const edits = 1 + Math.floor(rnd() * 4);
  for (let e = 0; e < edits; e++) pick(EDITS, rnd)(lines, rnd);
  const at = lines.findIndex((l) => l.startsWith("! Last configuration change at "));
  if (at >= 0) {
    const stamp = `${String(Math.floor(rnd() * 24)).padStart(2, "0")}:${String(Math.floor(rnd() * 60)).padStart(2, "0")}:14 UTC day ${day}`;
    lines[at] = `! Last configuration change at ${stamp} by netadmin`;
    if (lines[at + 1]?.startsWith("! NVRAM")) lines[at + 1] = `! NVRAM config last updated at ${stamp} by netadmin`;
  }
  return `${lines.join("\n")}\n`;
}

const IMAGES = ["17.06.05", "17.09.04a", "17.12.02", "17.12.03"];
/** `show version` as a device prints it on `day`; `release` counts the upgrades it had. */
export function showVersion(index: number, day: number, release: number): string {
  const rnd = mulberry32(index * 31 + 5);
  const serial = `FOC${Math.floor(rnd() * 1e8)
    .toString()
    .padStart(8, "0")}`;
  const image = IMAGES[Math.min(IMAGES.length - 1, (index % 2) + release)]!;
  return [
    `Cisco IOS XE Software, Version ${image}`,
    "Cisco IOS Software [Cupertino], Catalyst L3 Switch Software (CAT9K_IOSXE), RELEASE SOFTWARE (fc2)",
    "Technical Support: http://www.cisco.com/techsupport",
    "ROM: IOS-XE ROMMON",
    `BOOTLDR: System Bootstrap, Version ${image}, RELEASE SOFTWARE (P)`,
    `uptime is ${day + 3 + (index % 200)} days, ${index % 24} hours, ${index % 60} minutes`,
    "Uptime for this control processor is the same",
    'System image file is "flash:packages.conf"',
    "cisco C9300-48P (X86) processor with 1338934K/6147K bytes of memory.",
    `Processor board ID ${serial}`,
    "48 Gigabit Ethernet interfaces",
    "4 Ten Gigabit Ethernet interfaces",
    "2048K bytes of non-volatile configuration memory.",
    "8388608K bytes of physical memory.",
    `Configuration register is 0x102`,
    "",
  ].join("\n");
}

/** Lines that change without the configuration changing (the template's volatile filters would drop them). */
const VOLATILE = [/^! Last configuration change at /, /^! NVRAM config last updated at /, /uptime is /i];
export const significantText = (_command: string, text: string) =>
  text
    .split("\n")
    .filter((l) => !VOLATILE.some((re) => re.test(l)))
    .join("\n");

/** Whether device `index` changes on `day` (about `share` of devices a day), and whether it is upgraded. */
export function nightOf(index: number, day: number, share: number): { changed: boolean; upgraded: boolean } {
  const rnd = mulberry32(index * 65_537 + day * 977 + 3);
  const changed = day === 0 || rnd() < share;
  return { changed, upgraded: day > 0 && changed && rnd() < 0.02 };
}
