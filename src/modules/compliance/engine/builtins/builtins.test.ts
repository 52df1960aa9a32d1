import { describe, expect, it } from "vitest";
import { loadBuiltinTemplates } from "../../../../runtime/builtin-templates.ts";
import { parseTemplate } from "../../../templates/template-schema.ts";
import { BUILTIN_POLICIES, evaluatePolicy, parsePolicy, templateNesting, type PolicyEvaluation } from "../index.ts";

/** Each built-in policy is written for the built-in template of the same key: its configurations nest as that says. */
const TEMPLATES = new Map(loadBuiltinTemplates().map((t) => [t.key, t.code]));
function evaluate(key: string, config: string): PolicyEvaluation {
  const builtin = BUILTIN_POLICIES.find((p) => p.key === key)!;
  const template = parseTemplate(TEMPLATES.get(key)!);
  if (!template.ok) throw new Error(`template ${key} does not parse`);
  return evaluatePolicy(parsePolicy(builtin.definition).policy, config, { family: templateNesting(template.template) });
}
const failing = (e: PolicyEvaluation) =>
  e.rules.filter((r) => !r.passed).map((r) => r.description.split(" ").slice(0, 4).join(" "));

describe("built-in policies", () => {
  it("cover IOS/IOS-XE, NX-OS, Junos, EOS and FortiOS, and every one parses with no problems", () => {
    expect(BUILTIN_POLICIES.map((p) => p.key).sort()).toEqual([
      "arista-eos",
      "cisco-ios",
      "cisco-nxos",
      "fortinet-fortios",
      "juniper-junos",
    ]);
    for (const p of BUILTIN_POLICIES) {
      const { policy, problems } = parsePolicy(p.definition);
      expect(problems, p.key).toEqual([]);
      expect(policy.rules.length, p.key).toBeGreaterThanOrEqual(10);
      for (const r of policy.rules) expect(r.description.length, `${p.key} rule ${r.index}`).toBeGreaterThan(30);
    }
  });

  it("are listed in policies.yaml, each for the vendor its built-in template names", () => {
    expect(BUILTIN_POLICIES.find((p) => p.key === "juniper-junos")?.name).toBe("Juniper Junos baseline hardening");
    for (const p of BUILTIN_POLICIES) {
      const template = parseTemplate(TEMPLATES.get(p.key)!);
      expect(template.ok && template.template.vendor, p.key).toBe(p.vendor);
    }
  });

  const HARDENED_IOS = `service tcp-keepalives-in
service timestamps log datetime msec localtime show-timezone
service password-encryption
no service pad
hostname core-1
enable secret 9 $9$abc
aaa new-model
aaa authentication login default group tacacs+ local
no ip source-route
no ip http server
ip http secure-server
ip ssh version 2
logging host 10.255.0.14
ntp server 10.255.0.1
snmp-server community n0tD3fault RO 99
banner login ^C
Authorised access only
^C
line con 0
 exec-timeout 5 0
line vty 0 4
 access-class 99 in
 exec-timeout 10 0
 transport input ssh
`;

  it("Cisco IOS: a hardened configuration complies; each weakening fails its rule", () => {
    expect(failing(evaluate("cisco-ios", HARDENED_IOS))).toEqual([]);
    const weak = HARDENED_IOS.replace("no ip http server", "ip http server")
      .replace("aaa new-model", "no aaa new-model")
      .replace(" transport input ssh", " transport input ssh telnet")
      .replace("snmp-server community n0tD3fault RO 99", "snmp-server community public RW");
    const result = evaluate("cisco-ios", weak);
    expect(failing(result)).toEqual([
      "AAA is enabled (aaa",
      "Remote management sessions cannot",
      "The clear-text HTTP management",
      "No SNMP community uses",
      "No SNMP community grants",
    ]);
    expect(result.rules.find((r) => r.description.startsWith("Remote management sessions"))!.remediation).toEqual([
      "line vty 0 4",
      " no transport input ssh telnet",
    ]);
  });

  it("Junos: a hardened configuration complies; telnet and a public community fail", () => {
    const hardened = `system {
    host-name edge-1;
    root-authentication {
        encrypted-password "$6$abc";
    }
    login {
        message "Authorised access only";
        retry-options {
            tries-before-disconnect 3;
        }
        class ops {
            idle-timeout 10;
        }
    }
    services {
        ssh {
            root-login deny;
        }
    }
    syslog {
        host 10.255.0.14 {
            any notice;
        }
    }
    ntp {
        server 10.255.0.1;
    }
    no-redirects;
}
snmp {
    community n0tD3fault {
        authorization read-only;
    }
}
`;
    expect(failing(evaluate("juniper-junos", hardened))).toEqual([]);
    const weak = hardened
      .replace("        ssh {", "        telnet;\n        ssh {")
      .replace("community n0tD3fault", "community public");
    expect(failing(evaluate("juniper-junos", weak))).toEqual(["The Telnet service is", "No SNMP community uses"]);
  });

  it("FortiOS: a hardened configuration complies; HTTP admin access on a port fails in its edit section", () => {
    const hardened = `config system global
    set admintimeout 10
    set auto-install-config disable
    set auto-install-image disable
    set pre-login-banner enable
end
config system password-policy
    set status enable
end
config system interface
    edit "port1"
        set allowaccess ping https ssh
    next
end
config system admin
    edit "admin"
        set trusthost1 10.255.0.0 255.255.255.0
    next
end
config log syslogd setting
    set status enable
    set server "10.255.0.14"
end
`;
    expect(failing(evaluate("fortinet-fortios", hardened))).toEqual([]);
    const result = evaluate("fortinet-fortios", hardened.replace("ping https ssh", "ping https http"));
    expect(failing(result)).toEqual(["No interface allows management"]);
    expect(result.rules.find((r) => !r.passed)!.sections).toEqual([{ line: 11, header: 'edit "port1"' }]);
  });
});
