/**
 * The built-in baseline hardening policies, one definition file each beside this one (rConfig format, so they
 * can be copied into rConfig or edited as a user's policy). Read once when the module loads.
 */
import { readFileSync } from "node:fs";

export type BuiltinPolicy = {
  /** Stable identity across releases (the file name). */
  key: string;
  name: string;
  description: string;
  /** The vendor the policy is written for (its key is the built-in template it checks, whose `nesting` applies). */
  vendor: string;
  definition: string;
};

const POLICIES: Omit<BuiltinPolicy, "definition">[] = [
  {
    key: "cisco-ios",
    name: "Cisco IOS / IOS-XE baseline hardening",
    vendor: "Cisco",
    description:
      "Management-plane hardening for Cisco IOS and IOS-XE from Cisco's IOS hardening guide and the CIS benchmarks: AAA, SSHv2 only, no Telnet or HTTP, VTY access lists and timeouts, legacy services off, remote logging, NTP, SNMP communities, login banner.",
  },
  {
    key: "cisco-nxos",
    name: "Cisco NX-OS baseline hardening",
    vendor: "Cisco",
    description:
      "Management-plane hardening for Cisco NX-OS from Cisco's NX-OS hardening guide and the CIS benchmark: no Telnet, SSH on, password strength checks, AAA, VTY access lists and timeouts, CoPP, remote logging, NTP, SNMP communities, banner.",
  },
  {
    key: "juniper-junos",
    name: "Juniper Junos baseline hardening",
    vendor: "Juniper",
    description:
      "Management-plane hardening for Junos from Juniper's hardening guidance and the CIS benchmark: no Telnet, FTP or HTTP J-Web, no root SSH login, login retry limits and idle timeouts, NTP, remote syslog, banner, SNMP communities, no ICMP redirects.",
  },
  {
    key: "arista-eos",
    name: "Arista EOS baseline hardening",
    vendor: "Arista",
    description:
      "Management-plane hardening for Arista EOS: Telnet and clear-text eAPI off, SSH idle timeout, AAA authentication, authorisation and accounting, no password-less accounts, NTP, remote logging, SNMP communities, banner.",
  },
  {
    key: "fortinet-fortios",
    name: "Fortinet FortiOS baseline hardening",
    vendor: "Fortinet",
    description:
      "Management-plane hardening for FortiGate from Fortinet's FortiOS hardening guide and the CIS benchmark: admin timeouts, strong crypto, no Telnet or HTTP administration, trusted hosts, password policy, USB auto-install off, banner, remote syslog, NTP, SNMP communities.",
  },
];

export const BUILTIN_POLICIES: BuiltinPolicy[] = POLICIES.map((p) => ({
  ...p,
  definition: readFileSync(new URL(`./${p.key}.txt`, import.meta.url), "utf8"),
}));
