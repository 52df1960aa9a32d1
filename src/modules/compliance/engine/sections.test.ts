import { describe, expect, it } from "vitest";
import { ConfigText } from "./config-text.ts";
import { evaluatePolicy, parsePolicy, type ConfigFamily, type RuleResult } from "./index.ts";
import { hierarchy, hierarchyArrays } from "./sections.ts";
import { mulberry32 } from "../../../kernel/random.ts";

function check(definition: string, config: string, family: ConfigFamily): RuleResult {
  const { policy, problems } = parsePolicy(definition);
  expect(problems).toEqual([]);
  return evaluatePolicy(policy, config, { family }).rules[0]!;
}

const IOS = [
  "interface GigabitEthernet1/0/1", //  1
  " description user port", //          2
  " switchport mode access", //         3
  " storm-control broadcast level 1.00", // 4
  "!", //                               5
  "interface GigabitEthernet1/0/2", //  6
  " description printer", //           7
  " switchport mode access", //         8
  "!", //                               9
  "interface GigabitEthernet1/0/3", // 10
  " shutdown", //                      11
  "!", //                              12
  "interface GigabitEthernet1/0/4", // 13
  "!", //                              14
  "interface Vlan10", //               15
  " ip address 10.0.10.1 255.255.255.0", // 16
  "!", //                              17
  "router bgp 65000", //               18
  " neighbor 10.0.0.2 remote-as 65001", // 19
  " address-family ipv4", //           20
  "  neighbor 10.0.0.2 activate", //   21
  " exit-address-family", //           22
  " address-family ipv6", //           23
  "  network 2001:db8::/32", //        24
  " exit-address-family", //           25
  "line vty 0 4", //                   26
  " transport input telnet", //        27
].join("\n");

const STORM = `// Description: access ports limit broadcast storms
#[section: ^interface GigabitEthernet]
#[unless: ^ shutdown]
#[must_match_single_string]
storm-control broadcast level
`;

describe("section scoping on an indentation-nested configuration (IOS)", () => {
  it("checks every matching section but the excluded ones, and names each offending section", () => {
    const r = check(STORM, IOS, "indent");
    expect(r.passed).toBe(false);
    expect(r.sectionsChecked).toBe(3); // 1/0/3 is shut down; Vlan10 is not a GigabitEthernet
    expect(r.sections).toEqual([
      { line: 6, header: "interface GigabitEthernet1/0/2" },
      { line: 13, header: "interface GigabitEthernet1/0/4" },
    ]);
    expect(r.evidence).toEqual([
      { line: null, text: "storm-control broadcast level", section: "interface GigabitEthernet1/0/2" },
      { line: null, text: "storm-control broadcast level", section: "interface GigabitEthernet1/0/4" },
    ]);
    expect(r.remediation).toEqual([
      "interface GigabitEthernet1/0/2",
      " storm-control broadcast level",
      "interface GigabitEthernet1/0/4",
      " storm-control broadcast level",
    ]);
  });

  it("passes when every section complies, and a line outside the section does not count", () => {
    const fixed = IOS.replace(" description printer", " storm-control broadcast level 1.00").replace(
      "interface GigabitEthernet1/0/4\n",
      "interface GigabitEthernet1/0/4\n shutdown\n",
    );
    expect(check(STORM, fixed, "indent")).toMatchObject({ passed: true, sectionsChecked: 2, sections: [] });
    // the storm-control line is in 1/0/1 only: a rule scoped to Vlan interfaces does not see it
    const vlan = STORM.replace("^interface GigabitEthernet", "^interface Vlan").replace("#[unless: ^ shutdown]\n", "");
    expect(check(vlan, IOS, "indent")).toMatchObject({
      passed: false,
      sections: [{ line: 15, header: "interface Vlan10" }],
    });
  });

  it("nested sections: a section line per level, forbidden lines removed under both headers", () => {
    const def =
      "// Description: no IPv6 networks in BGP\n#[section: ^router bgp]\n#[section: ^ address-family ipv6]\n#[must_not_match_single_string]\nnetwork 2001:db8::/32\n";
    const r = check(def, IOS, "indent");
    expect(r).toMatchObject({
      passed: false,
      sectionsChecked: 1,
      sections: [{ line: 23, header: "address-family ipv6" }],
    });
    expect(r.evidence).toEqual([{ line: 24, text: "  network 2001:db8::/32", section: "address-family ipv6" }]);
    expect(r.remediation).toEqual(["router bgp 65000", " address-family ipv6", "  no network 2001:db8::/32"]);
  });

  it("a rule whose sections do not exist passes with none checked", () => {
    const def = "// Description: x\n#[section: ^interface TenGigabitEthernet]\n#[must_match_single_string]\nmtu 9216\n";
    expect(check(def, IOS, "indent")).toMatchObject({ passed: true, sectionsChecked: 0, sections: [], evidence: [] });
  });

  it("every method works inside sections (code block within each vty section)", () => {
    const def = "// Description: vty\n#[section: ^line vty]\n#[match_code_block_flexible]\ntransport input ssh\n";
    expect(check(def, IOS, "indent")).toMatchObject({
      passed: false,
      sections: [{ line: 26, header: "line vty 0 4" }],
      remediation: ["line vty 0 4", " transport input ssh"],
    });
  });
});

const JUNOS = [
  "system {", //                           1
  "    host-name edge-2;", //              2
  "    services {", //                     3
  "        ssh {", //                      4
  "            protocol-version v2;", //   5
  "        }", //                          6
  "        telnet;", //                    7
  "    }", //                              8
  "}", //                                  9
  "interfaces {", //                      10
  "    ge-0/0/0 {", //                    11
  "        description uplink;", //       12
  "        unit 0 {", //                  13
  "            family inet {", //         14
  "                address 192.0.2.1/30;", // 15
  "            }", //                     16
  "        }", //                         17
  "    }", //                             18
  "    ge-0/0/1 {", //                    19
  "        disable;", //                  20
  "    }", //                             21
  "    ge-0/0/2 {", //                    22
  "        unit 0;", //                   23
  "    }", //                             24
  "}", //                                 25
].join("\n");

describe("section scoping on a brace-nested configuration (Junos)", () => {
  it("scopes to the braces and names offending sections", () => {
    const def =
      "// Description: every enabled port has a description\n#[section: ^\\s+ge-]\n#[unless: ^\\s+disable;]\n#[must_match_regex]\n^\\s+description \\S+\n";
    const r = check(def, JUNOS, "braces");
    expect(r).toMatchObject({
      passed: false,
      sectionsChecked: 2,
      sections: [{ line: 22, header: "ge-0/0/2 {" }],
      remediation: null,
    });
    expect(r.evidence).toEqual([{ line: null, text: "^\\s+description \\S+", section: "ge-0/0/2 {" }]);
  });

  it("a line in a nested section is inside its ancestors too; a sibling's is not", () => {
    const telnet =
      "// Description: no telnet service\n#[section: ^\\s+services \\{]\n#[must_not_match_single_string]\ntelnet;\n";
    expect(check(telnet, JUNOS, "braces")).toMatchObject({
      passed: false,
      evidence: [{ line: 7, text: "        telnet;", section: "services {" }],
      remediation: null,
    });
    const ssh = "// Description: ssh v2\n#[section: ^\\s+ssh \\{]\n#[must_match_single_string]\nhost-name\n";
    expect(check(ssh, JUNOS, "braces")).toMatchObject({ passed: false, sections: [{ line: 4, header: "ssh {" }] });
  });

  it("set-format configurations get `delete` lines for forbidden lines and `set` lines for missing ones", () => {
    const set = "set system host-name edge-2\nset system services telnet\nset system services ssh\n";
    const forbidden = check(
      "// Description: x\n#[must_not_match_single_string]\nset system services telnet\n",
      set,
      "braces",
    );
    expect(forbidden).toMatchObject({
      passed: false,
      evidence: [{ line: 2 }],
      remediation: ["delete system services telnet"],
    });
    const required = check(
      "// Description: x\n#[must_match_single_string]\nset system ntp server 192.0.2.10\n",
      set,
      "braces",
    );
    expect(required.remediation).toEqual(["set system ntp server 192.0.2.10"]);
  });
});

const FORTIOS = [
  "config system global", //                       1
  '    set hostname "fw-1"', //                  2
  "    set admintimeout 480", //                   3
  "end", //                                        4
  "config system interface", //                    5
  '    edit "port1"', //                         6
  "        set allowaccess ping https ssh", //     7
  "    next", //                                   8
  '    edit "port2"', //                         9
  "        set allowaccess ping http telnet", //  10
  "    next", //                                  11
  '    edit "port3"', //                        12
  "        set status down", //                   13
  "        set allowaccess http", //              14
  "    next", //                                  15
  "end", //                                       16
  "config system admin", //                       17
  '    edit "admin"', //                        18
  '        set accprofile "super_admin"', //   19
  "    next", //                                  20
  "end", //                                       21
].join("\n");

describe("section scoping on FortiOS config/edit/next/end", () => {
  it("edit sections inside a config section, with an unless", () => {
    const def = `// Description: no cleartext management on interfaces
#[section: ^config system interface]
#[section: ^\\s*edit ]
#[unless: set status down]
#[must_not_match_regex]
set allowaccess .*\\b(http|telnet)\\b
`;
    const r = check(def, FORTIOS, "fortios");
    expect(r).toMatchObject({
      passed: false,
      sectionsChecked: 2,
      sections: [{ line: 9, header: 'edit "port2"' }],
      remediation: null,
    });
    expect(r.evidence).toEqual([
      { line: 10, text: "        set allowaccess ping http telnet", section: 'edit "port2"' },
    ]);
  });

  it("a config section ends at its end line: later sections are not part of it", () => {
    const def =
      "// Description: idle admin sessions time out\n#[section: ^config system global]\n#[must_match_regex]\n^\\s*set admintimeout ([1-9]|1[0-5])$\n";
    expect(check(def, FORTIOS, "fortios")).toMatchObject({
      passed: false,
      sections: [{ line: 1, header: "config system global" }],
    });
    const accprofile =
      "// Description: x\n#[section: ^config system global]\n#[must_not_match_single_string]\nsuper_admin\n";
    expect(check(accprofile, FORTIOS, "fortios")).toMatchObject({ passed: true, sectionsChecked: 1 });
  });
});

describe("indentation nesting answered line by line is the one worked out for every line", () => {
  const same = (text: string, order: number[]) => {
    const config = new ConfigText(text);
    const arrays = hierarchyArrays(config, "indent");
    const lazy = hierarchy(config, "indent");
    for (const i of order) {
      expect([lazy.end(i), lazy.parent(i)], `line ${i} of ${JSON.stringify(text)}`).toEqual([
        arrays.end[i],
        arrays.parent[i],
      ]);
    }
  };

  it("on random texts of spaces, tabs, blank lines and CRLF, asked in any order", () => {
    const next = mulberry32(18);
    const pieces = ["", " ", "  ", "\t", " \t", "   "];
    for (let round = 0; round < 300; round++) {
      const lines = Array.from({ length: Math.floor(next() * 40) }, () => {
        const indent = pieces[Math.floor(next() * pieces.length)]!;
        const body = next() < 0.2 ? "" : next() < 0.5 ? "x" : "interface y";
        return indent + body + (next() < 0.2 ? "\r" : "");
      });
      const text = lines.join("\n") + (next() < 0.5 ? "\n" : "");
      const n = new ConfigText(text).lineCount;
      const order = Array.from({ length: n }, (_, i) => i).sort(() => next() - 0.5);
      same(text, [...order, ...order.slice(0, 5)]);
    }
  });

  it("on deep nesting asked about every line, past where it works every line out at once", () => {
    const stairs = Array.from({ length: 400 }, (_, i) => `${" ".repeat(i)}level ${i}`);
    const text = [...stairs, ...stairs, "end"].join("\n");
    const n = new ConfigText(text).lineCount;
    same(
      text,
      Array.from({ length: n }, (_, i) => i),
    );
    same(
      text,
      Array.from({ length: n }, (_, i) => n - 1 - i),
    );
  });
});
