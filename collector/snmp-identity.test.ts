import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseTemplate } from "../src/modules/templates/template-schema.ts";
import { enterpriseOf, identify, type SnmpFamily } from "./snmp-identity.ts";

/** The built-in templates: what identification knows of vendors is their detect sections. */
const dir = join(import.meta.dirname, "templates");
const builtins: SnmpFamily[] = readdirSync(dir)
  .filter((f) => f.endsWith(".yaml"))
  .map((f) => {
    const parsed = parseTemplate(readFileSync(join(dir, f), "utf8"));
    if (!parsed.ok) throw new Error(`${f}: ${JSON.stringify(parsed.errors)}`);
    return parsed.template;
  });

// sysDescr strings as these devices print them (vendor documentation and `snmpget` output).
describe("identify", () => {
  it.each([
    [
      "1.3.6.1.4.1.9.1.1208",
      "Cisco IOS Software, C2960X Software (C2960X-UNIVERSALK9-M), Version 15.2(7)E8, RELEASE SOFTWARE (fc1)\r\nTechnical Support: http://www.cisco.com/techsupport",
      { vendor: "Cisco", model: "C2960X", version: "15.2(7)E8" },
    ],
    [
      "1.3.6.1.4.1.9.1.2494",
      "Cisco IOS Software [Amsterdam], Catalyst L3 Switch Software (CAT9K_IOSXE), Version 17.3.4, RELEASE SOFTWARE (fc3)",
      { vendor: "Cisco", model: "Catalyst L3 Switch", version: "17.3.4" },
    ],
    [
      "1.3.6.1.4.1.9.12.3.1.3.1812",
      "Cisco NX-OS(tm) n9000, Software (n9000-dk9), Version 9.3(8), RELEASE SOFTWARE Copyright (c) 2002-2020 by Cisco Systems, Inc.",
      { vendor: "Cisco", model: "n9000", version: "9.3(8)" },
    ],
    [
      "1.3.6.1.4.1.9.1.2315",
      "Cisco Adaptive Security Appliance Version 9.8(4)",
      { vendor: "Cisco", version: "9.8(4)" },
    ],
    [
      "1.3.6.1.4.1.2636.1.1.1.2.25",
      "Juniper Networks, Inc. mx480 internet router, kernel JUNOS 15.1R7.9, Build date: 2019-03-08 00:29:19 UTC",
      { vendor: "Juniper", model: "mx480", version: "15.1R7.9" },
    ],
    [
      "1.3.6.1.4.1.30065.1.3011.7050.3741.64",
      "Arista Networks EOS version 4.24.2F running on an Arista Networks DCS-7050TX-64",
      { vendor: "Arista", model: "DCS-7050TX-64", version: "4.24.2F" },
    ],
    ["1.3.6.1.4.1.14988.1", "RouterOS CCR1036-8G-2S+", { vendor: "MikroTik", model: "CCR1036-8G-2S+" }],
    [
      "1.3.6.1.4.1.47196.4.1.1.1.300",
      "Aruba JL658A 6300M 24SFP+ 4SFP56 Swch FL.10.08.1021",
      { vendor: "Aruba", model: "JL658A", version: "FL.10.08.1021" },
    ],
    [
      "1.3.6.1.4.1.25506.1.1700",
      "H3C Comware Platform Software, Software Version 7.1.064, Release 0427P22\r\nH3C S6850-56HF\r\nCopyright (c) 2004-2021 New H3C Technologies Co., Ltd. All rights reserved.",
      { vendor: "HPE", model: "S6850-56HF", version: "7.1.064, Release 0427P22" },
    ],
    [
      "1.3.6.1.4.1.8072.3.2.10",
      "Linux edge-01 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01) x86_64",
      { vendor: "Linux", version: "6.1.0-18-amd64" },
    ],
    ["1.3.6.1.4.1.12356.101.1.1004", "FGT60E", { vendor: "Fortinet" }],
  ])("%s", (sysObjectId, sysDescr, want) => {
    expect(identify({ sysObjectId, sysDescr }, builtins)).toEqual(want);
  });

  it("prefers the chassis part number from ENTITY-MIB to sysDescr's wording", () => {
    const sysDescr =
      "Cisco IOS Software, C2960X Software (C2960X-UNIVERSALK9-M), Version 15.2(7)E8, RELEASE SOFTWARE (fc1)";
    expect(
      identify({ sysObjectId: "1.3.6.1.4.1.9.1.1208", sysDescr, chassisModel: "WS-C2960X-48FPD-L" }, builtins),
    ).toEqual({ vendor: "Cisco", model: "WS-C2960X-48FPD-L", version: "15.2(7)E8" });
    expect(identify({ sysObjectId: "1.3.6.1.4.1.9.1.1208", sysDescr, chassisModel: "  " }, builtins).model).toBe(
      "C2960X",
    );
  });

  it("takes the vendor from the templates naming the longest prefix, and knows no vendor no template names", () => {
    // 1.3.6.1.4.1.1991 is Brocade's and Ruckus's (Foundry's) subtree: both templates name it, each with its vendor.
    const foundry = [
      { vendor: "Brocade", detect: builtins.find((b) => b.vendor === "Brocade")!.detect },
      {
        vendor: "Ruckus",
        detect: { ...builtins.find((b) => b.vendor === "Ruckus")!.detect!, sys_object_id: ["1.3.6.1.4.1.1991.1.3"] },
      },
    ];
    expect(
      identify({ sysObjectId: "1.3.6.1.4.1.1991.1.3.62.2.1", sysDescr: "Ruckus ICX7150-C12-POE" }, foundry).vendor,
    ).toBe("Ruckus");
    expect(identify({ sysObjectId: "1.3.6.1.4.1.1991.1.16.1", sysDescr: "NetIron MLX" }, foundry).vendor).toBe(
      "Brocade",
    );
    const withoutCisco = builtins.filter((b) => b.vendor !== "Cisco");
    expect(
      identify(
        {
          sysObjectId: "1.3.6.1.4.1.9.1.1208",
          sysDescr: "Cisco IOS Software, C2960X Software (C2960X-UNIVERSALK9-M), Version 15.2(7)E8",
        },
        withoutCisco,
      ),
    ).toEqual({});
  });

  it("knows nothing of an enterprise outside its table, nor of OIDs outside enterprises", () => {
    expect(identify({ sysObjectId: "1.3.6.1.4.1.99999.1", sysDescr: "Version 1.0" }, builtins)).toEqual({});
    expect(identify({ sysObjectId: "1.3.6.1.2.1.1", sysDescr: "RouterOS CCR1036" }, builtins)).toEqual({});
    expect(enterpriseOf(".1.3.6.1.4.1.9")).toBe(9);
    expect(enterpriseOf("1.3.6.1.4.10.9")).toBeUndefined();
  });
});
