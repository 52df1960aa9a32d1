import type { Db } from "../src/db/client.ts";
import { createDevices } from "../src/modules/devices/service.ts";
import type { DeviceInputT } from "../src/modules/devices/schemas.ts";
import type { SecretBox } from "../src/platform/secrets/box.ts";
import { mulberry32 } from "../src/kernel/random.ts";

const SITES = ["ams", "fra", "lon", "par", "mad", "nyc", "iad", "sjc", "sin", "tyo", "syd", "gru"];
const ROLES = ["core-rtr", "edge-rtr", "dist-sw", "acc-sw", "fw", "wan-rtr", "oob-sw"];
/** Vendors from the seeded reference list, with models a network of that vendor would run. */
const MODELS: Record<string, string[]> = {
  Cisco: ["C9300-48P", "C9500-32C", "ASR1001-X", "N9K-C93180YC-FX", "ISR4331"],
  Juniper: ["MX204", "EX4300-48T", "QFX5120-48Y", "SRX345"],
  Arista: ["7050SX3-48YC8", "7280CR3-32P4", "720XP-48ZC2"],
  Fortinet: ["FG-100F", "FG-600E", "FG-1800F"],
  MikroTik: ["CCR2004-16G-2S+", "CRS326-24G-2S+"],
  Aruba: ["6300M", "CX 8325"],
  HPE: ["5945", "FlexFabric 5710"],
};
const VENDORS = Object.keys(MODELS);
const EXTRA_TAGS = ["pci", "critical", "lab", "dmz", "backup-daily", "backup-weekly", "legacy", "ipv6"];
const TEAMS = ["netops", "secops", "dc-team", "wan-team"];

/** The i-th device of a realistic inventory: site and role in the name, site-based addressing, tags and attributes. */
export function benchDevice(i: number, next: () => number): DeviceInputT {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const siteIndex = i % SITES.length;
  const site = SITES[siteIndex]!;
  const perSite = Math.floor(i / SITES.length);
  const role = pick(ROLES);
  const vendor = role === "fw" ? "Fortinet" : pick(VENDORS);
  const extra = EXTRA_TAGS.filter(() => next() < 0.15).slice(0, 2);
  return {
    device_name: `${site}-${role}-${String(perSite + 1).padStart(4, "0")}`,
    device_ip: `10.${siteIndex}.${Math.floor(perSite / 250)}.${(perSite % 250) + 1}`,
    device_vendor: vendor,
    device_model: pick(MODELS[vendor]!),
    device_tags: [site, role, ...extra],
    device_username: "backup",
    ...(next() < 0.5 ? { device_password: "bench-secret" } : {}),
    custom: {
      site,
      rack: `r${1 + Math.floor(next() * 40)}`,
      serial: Math.floor(next() * 0xffffffff)
        .toString(16)
        .toUpperCase()
        .padStart(8, "0"),
      owner: pick(TEAMS),
      tier: 1 + Math.floor(next() * 3),
      monitored: next() < 0.9,
    },
    notes: next() < 0.3 ? `Installed ${2015 + Math.floor(next() * 10)}; see runbook ${site.toUpperCase()}-${role}` : "",
  };
}

/** Inserts `count` devices through the real write path (bulk create, 1000 per transaction, as the API would). */
export async function seedDevices(db: Db, secrets: SecretBox, count: number): Promise<void> {
  const next = mulberry32(42);
  const batch = 1000;
  for (let start = 0; start < count; start += batch) {
    const inputs = Array.from({ length: Math.min(batch, count - start) }, (_, k) => benchDevice(start + k, next));
    await createDevices(
      { db, secrets, actor: { system: "bench seed" }, scope: { all: true }, abilities: "all", now: new Date() },
      inputs,
      true,
    );
  }
}
