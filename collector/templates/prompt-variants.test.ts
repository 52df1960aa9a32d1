import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseTemplate, type ConnectionTemplate } from "../../src/modules/templates/template-schema.ts";
import { compileTemplatePattern } from "../../src/modules/templates/template-patterns.ts";
import { promptTail } from "../../src/modules/templates/template-text.ts";

/**
 * What a written download session cannot show (test/fixtures/sessions): the prompts of configuration modes, HA roles
 * and other CLI modes a push or a differently set-up device meets, and the questions a push answers. Each built-in
 * template listed here must take every `prompts` entry for its prompt, none of `not_prompts` (output lines that would
 * end a command early), and answer each `questions` entry with one of its push prompts.
 */
type Variants = { prompts: string[]; not_prompts: string[]; questions?: string[] };

const VARIANTS: Record<string, Variants> = {
  "cisco-iosxr": {
    prompts: [
      "RP/0/RSP0/CPU0:core-asr9010-fra1-pe02.backbone.example.net#",
      "RP/0/RSP0/CPU0:core-asr9010-fra1-pe02.backbone.example.net(config)#",
      "RP/0/RP0/CPU0:ncs540-agg01(config-if)#",
      "RP/0/RSP0/CPU0:pe1(config-bgp-nbr-af)#",
      "RP/0/RP0/CPU0:xrv9k(config-isis-if)#",
    ],
    not_prompts: [
      "Tue Nov 24 14:00:01.234 UTC",
      "Building configuration...",
      "banner motd #",
      " description to core-asr9010#",
    ],
    questions: ["Uncommitted changes found, commit them before exiting(yes/no/cancel)? [cancel]:"],
  },
  "cisco-ftd": {
    prompts: ["> ", "\r\n> ", "firepower> ", "firepower# ", "fra1-dc-ftd2140-edge-a# "],
    not_prompts: ["<--- More --->", ": end", " ikev2 local-authentication pre-shared-key *****"],
  },
  "cisco-smb": {
    prompts: [
      "sw1#",
      "sw1>",
      "fra1-campus-b12-cbs350-48p-access-stack01(config)#",
      "sw1(config-if)#",
      "sw1(config-if-range)#",
    ],
    not_prompts: [
      "More: <space>,  Quit: q or CTRL+Z, One line: <return> ",
      "@",
      "ssd-control-end cb0a3fdb1f3a1af4e4430033719968c0",
    ],
    questions: ["Overwrite file [startup-config].... (Y/N)[N] ?"],
  },
  "cisco-aireos": {
    prompts: [
      "(Cisco Controller) >",
      "(Cisco Controller) > ",
      "(fra1-campus-wlc5520-primary.example.net) >",
      "(wlc-3504) config>",
      "(wlc-3504) config wlan>",
      "\r\n(Cisco Controller) >",
    ],
    not_prompts: [
      "(Cisco Controller)",
      "User: ",
      "--More-- or (q)uit",
      "config sysname wlc-3504",
      "Product Name..................... Cisco Controller",
    ],
    questions: ["Are you sure you want to save? (y/n)"],
  },
  "paloalto-panos": {
    prompts: [
      "admin@PA-3220> ",
      "admin@PA-3220# ",
      "netkeep@fra1-dc-edge-pa3220-fw01.example.net(active)# ",
      "admin@fw01(passive)> ",
      "admin@fw01(active-primary)> ",
      "admin@Panorama> ",
    ],
    not_prompts: [
      "[edit]",
      'set address web1 description "admin@web1>"',
      "Number of failed attempts since last successful login: 0",
    ],
  },
  "checkpoint-gaia": {
    prompts: ["gw-fra1> ", "fra1-perimeter-cp6600-gw-member-a> ", "vsx-gw:2> ", "[Expert@gw-fra1:0]# "],
    not_prompts: ["# Exported by netkeep on Tue Nov 24 14:00:02 2026", 'set interface eth2 comments "to core>"'],
  },
  "juniper-screenos": {
    prompts: ["ssg5-> ", "fra1-branch-ssg550m-fw-cluster-a(M)-> ", "fw01(B)-> ", "fw01(vsys-dmz)-> "],
    not_prompts: ["--- more --- ", 'set policy id 12 name "a->b" from "Trust" to "Untrust"  "Any" "Any" "ANY" permit'],
  },
  "dell-os6": {
    prompts: [
      "(Routing) >",
      "(Routing) #",
      "(Routing) (Config)#",
      "(Routing) (Interface 0/1)#",
      "(rack12-lb8-quanta-tor-switch-a.example.net) (Config)#",
      "idf2-n2048p-stack-ground-floor(config-if-Gi1/0/1)#",
    ],
    not_prompts: ["--More-- or (q)uit", "!Current Configuration:"],
    questions: ["Are you sure you want to save? (y/n) "],
  },
  "sonicwall-sonicos": {
    prompts: [
      "admin@2CB8ED0A1B2C> ",
      "config(2CB8ED0A1B2C)# ",
      "(edit-interface[X0])# ",
      "(add-address-object[Branch LAN])# ",
    ],
    not_prompts: ["    exit", "checksum 2918374410", '        comment "secret 3,5 rack door"'],
  },
  "watchguard-fireware": {
    prompts: [
      "WG#",
      "WG> ",
      "[FAULT]WG<managed-by-wsm><master>> ",
      "WG(config)# ",
      "WG(config/policy)# ",
      "I have read and accept the Logon Disclaimer message. (yes or no)? ",
    ],
    not_prompts: ["</profile>", "Memory           : 41%", "-- WatchGuard Fireware OS Version 12.10.3.B687000"],
  },
  "netgate-pfsense": {
    prompts: [
      "Enter an option: ",
      "[2.7.2-RELEASE][admin@pfsense.home.arpa]/root: ",
      "[24.03-RELEASE][admin@fw1.example.net]/usr/local/etc: ",
    ],
    not_prompts: ["\t\t<descr><![CDATA[System Administrator]]></descr>", " 8) Shell", "</pfsense>"],
  },
  "ciena-saos": {
    prompts: ["ciena-3930-pop-a> ", "ciena-3930-pop-a*> ", "5160-core-01# "],
    not_prompts: [
      "! CONFIGURATION: running",
      "+------------------------------------------------------------------------------+",
    ],
  },
  "perle-iolan": {
    prompts: ["SCS16-rack4# ", "SCS16-rack4$ "],
    not_prompts: ["set line 1 speed 9600", "Perle IOLAN SCS48C"],
  },
  "zte-zxa10": {
    prompts: [
      "ZXAN> ",
      "ZXAN#",
      "ZXAN(config)#",
      "ZXAN(config-if-gpon_olt-1/1/1)#",
      "ZXAN(gpon-onu-mng 1/1/1:1)#",
      "OLT-C300-01(config-if)# ",
    ],
    not_prompts: ["$", "#", "!</xpon>", "  onu 1 type ZTE-F660 sn ZTEGC0FFEE01"],
  },
  "vsol-olt": {
    prompts: [
      "OLT-1|FRA-V1600G2> ",
      "OLT-1|FRA-V1600G2(config)# ",
      "OLT-1|FRA-V1600G2(config-pon-0/1)# ",
      "GPON-OLT# ",
    ],
    not_prompts: ["!", "end", " onu add 1 profile HGU sn GPON00C0FFEE"],
  },
  // Prompts from Oxidized's lists of its models' prompts (spec/model/data/*#generic#prompt.yaml) and the issues
  // they came from, which these templates did not take.
  "alcatel-omniswitch": {
    prompts: [
      "-> ",
      "OS6860-core-> ",
      "S01-P1-RK13-SW01> ",
      "S01-P1-RK13-SW01# ",
      "S01-P1-RK13-SW01 > ",
      "S01-P1-RK13-SW01 # ",
    ],
    not_prompts: [
      "! Chassis:",
      'vlan 10 name "key-users"',
      "snmp community-map mode enable",
      'system name "OS6860E-core"',
    ],
  },
  "aruba-aosw": {
    prompts: [
      "(campus-mc-7210) >",
      "(campus-mc-7210) #",
      "(AAAA-WLC42) [mynode] #",
      "(AAAA-WLC42) ^[mynode] #",
      "(AAAA-WLC42) *[mynode] #",
      "(AAAA-WLC42) *[/] #",
      "(mc1) [md] (config) #",
    ],
    not_prompts: [
      "!",
      "   key <secret hidden>",
      '   essid "Corp-Guest"',
      "--More-- (q) quit (u) pageup (/) search (n) repeat",
    ],
  },
  "ruckus-fastiron": {
    prompts: [
      "ICX7150-48P Router#",
      "SSH@core-icx#",
      "SSH@core-icx>",
      "SSH@switch-001/002/003/123#",
      "ICX7450-48 Router(config-if-e1000-1/1/1)#",
    ],
    not_prompts: [
      "!",
      " tagged ethe 1/2/1",
      "interface ethernet 1/2/1",
      "--More--, next page: Space, next line: Return key, quit: Control-c",
    ],
  },
  "nvidia-onyx": {
    prompts: [
      "spine-sn2700 [standalone: master] > ",
      "spine-sn2700 [standalone: master] # ",
      "spine-sn2700 [standalone: master] (config) # ",
      "leaf1 [mlag-domain: master] (config interface ethernet 1/1) # ",
      " [standalone: master] > ",
      "\r [standalone: master] # ",
    ],
    not_prompts: ["##", "## Hostname: spine-sn2700-row3-pod1-a", "   interface ethernet 1/1 speed 100G force"],
  },
  "extreme-exos": {
    prompts: [
      "dist-x460.7 # ",
      "* dist-x460.7 # ",
      "Slot-1 dist-x460.3 # ",
      "Slot-1 VPEX SW-00035-002.1 # ",
      "* mydevice-eu-sw02 > ",
      "ancient-device02:1 # ",
    ],
    not_prompts: [
      "#",
      "# Module vlan configuration.",
      'configure snmp sysName "dist-x460g2-48p-bldg-c-stack"',
      "Press <SPACE> to continue or <Q> to quit:",
      "Do you want to save configuration to primary.cfg and overwrite it? (y/N) ",
    ],
    questions: ["Do you want to save configuration to primary.cfg and overwrite it? (y/N) "],
  },
};

function template(key: string): ConnectionTemplate {
  const parsed = parseTemplate(readFileSync(new URL(`./${key}.yaml`, import.meta.url), "utf8"));
  if (!parsed.ok) throw new Error(`${key}: ${parsed.errors.map((e) => e.message).join("; ")}`);
  return parsed.template;
}

describe.each(Object.entries(VARIANTS))("%s prompt variants", (key, variants) => {
  const t = template(key);
  const prompt = compileTemplatePattern(t.prompt!, "line");

  it("takes every prompt of the family for its prompt", () => {
    for (const p of variants.prompts) expect(prompt.test(promptTail(p)), JSON.stringify(p)).toBe(true);
  });

  it("takes no output line for a prompt", () => {
    for (const line of variants.not_prompts) expect(prompt.test(promptTail(line)), JSON.stringify(line)).toBe(false);
  });

  it.runIf(variants.questions)("answers the push's questions", () => {
    const patterns = (t.push?.prompts ?? []).map((p) => compileTemplatePattern(p.pattern, "line"));
    for (const q of variants.questions!)
      expect(
        patterns.some((p) => p.test(promptTail(q))),
        JSON.stringify(q),
      ).toBe(true);
  });
});
