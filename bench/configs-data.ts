/**
 * Configuration histories for bench/configs.ts: per device a cleaned IOS running configuration of about 30 KB
 * (bench/ios-config.ts: VLANs, access ports, SVIs, OSPF, extended ACLs, AAA, SNMP) and the versions that
 * follow it, each made from the one before by a few small edits of the kind people make (a port description,
 * an access VLAN, a shutdown, an ACL entry added or removed, a new logging host), with the "Last configuration
 * change" header moved on. Deterministic per device index, so every run measures the same texts.
 */
import { iosRunningConfig } from "./ios-config.ts";
import { mulberry32 } from "../src/kernel/random.ts";

/** The configuration as it is stored: the device's banner lines gone, LF line ends. */
function firstVersion(index: number, bytes: number): string[] {
  const lines = iosRunningConfig(index, bytes).split("\r\n");
  return lines.slice(3);
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

type Edit = (lines: string[], rnd: () => number) => void;
const pick = <T>(items: T[], rnd: () => number) => items[Math.floor(rnd() * items.length)] as T;
const indexesOf = (lines: string[], test: (l: string) => boolean) => lines.flatMap((l, i) => (test(l) ? [i] : []));

const EDITS: Edit[] = [
  (lines, rnd) => {
    const i = pick(
      indexesOf(lines, (l) => l.startsWith(" description ")),
      rnd,
    );
    if (i === undefined) return; // a small configuration may have none of these lines
    lines[i] =
      ` description ${pick(["printer", "ap", "camera", "desk", "kiosk", "spare"], rnd)} ${Math.floor(rnd() * 900) + 100} moved per change CHG${Math.floor(rnd() * 90000) + 10000}`;
  },
  (lines, rnd) => {
    const i = pick(
      indexesOf(lines, (l) => l.startsWith(" switchport access vlan ")),
      rnd,
    );
    if (i === undefined) return; // a small configuration may have none of these lines
    lines[i] = ` switchport access vlan ${10 + Math.floor(rnd() * 20)}`;
  },
  (lines, rnd) => {
    const i = pick(
      indexesOf(lines, (l) => l.startsWith("interface GigabitEthernet")),
      rnd,
    );
    if (i === undefined) return; // a small configuration may have none of these lines
    lines.splice(i + 1, 0, " shutdown");
  },
  (lines, rnd) => {
    const i = pick(
      indexesOf(lines, (l) => /^ \d+ (permit|deny)/.test(l)),
      rnd,
    );
    if (i === undefined) return; // a small configuration may have none of these lines
    const seq = Number(lines[i]!.trim().split(" ")[0]) + 5;
    lines.splice(
      i + 1,
      0,
      ` ${seq} permit tcp 10.${Math.floor(rnd() * 250)}.${Math.floor(rnd() * 250)}.0 0.0.0.255 host 172.16.${Math.floor(rnd() * 250)}.${Math.floor(rnd() * 250)} eq ${pick(["443", "8080", "22", "5060"], rnd)}`,
    );
  },
  (lines, rnd) => {
    const i = pick(
      indexesOf(lines, (l) => /^ \d+ (permit|deny)/.test(l)),
      rnd,
    );
    if (i === undefined) return; // a small configuration may have none of these lines
    lines.splice(i, 1);
  },
  (lines, rnd) => {
    const i = lines.indexOf("logging host 10.255.0.14");
    lines.splice(i + 1, 0, `logging host 10.255.${Math.floor(rnd() * 250)}.${Math.floor(rnd() * 250)}`);
  },
];
/** The `versions` texts of one device, oldest first, each about `bytes` long. */
export function deviceHistory(index: number, versions: number, bytes = 30_000): string[] {
  const rnd = mulberry32(index * 7919 + 17);
  const lines = firstVersion(index, bytes);
  const out: string[] = [];
  for (let v = 0; v < versions; v++) {
    if (v > 0) {
      const edits = 1 + Math.floor(rnd() * 4);
      for (let e = 0; e < edits; e++) pick(EDITS, rnd)(lines, rnd);
      const at = lines.findIndex((l) => l.startsWith("! Last configuration change at "));
      const stamp = `${String(8 + v).padStart(2, "0")}:${String(Math.floor(rnd() * 60)).padStart(2, "0")}:14 CET Mon ${MONTHS[(v + 2) % 12]} ${1 + (index % 28)} 2025`;
      lines[at] = `! Last configuration change at ${stamp} by netadmin`;
      lines[at + 1] = `! NVRAM config last updated at ${stamp} by netadmin`;
    }
    out.push(lines.join("\n") + "\n");
  }
  return out;
}

/** Lines that change without the configuration changing: left out when deciding whether a text is new. */
export const VOLATILE = [/^! Last configuration change at /, /^! NVRAM config last updated at /];
export const significantText = (text: string) =>
  text
    .split("\n")
    .filter((l) => !VOLATILE.some((re) => re.test(l)))
    .join("\n");
