import type { ConfigFamily } from "./types.ts";

/**
 * The hierarchy style of a vendor's or connection template's configuration text, from its name (e.g. "Juniper",
 * "juniper-junos", "fortinet-fortios", "cisco-ios"). Anything not known to nest otherwise nests by indentation,
 * as most CLIs do (IOS, IOS-XE, NX-OS, EOS, Comware, AOS-CX).
 */
export function familyForVendor(vendorOrTemplate: string | null): ConfigFamily {
  const name = (vendorOrTemplate ?? "").toLowerCase();
  if (/junos|juniper|vyos|vyatta|edgeos/.test(name)) return "braces";
  if (/forti/.test(name)) return "fortios";
  return "indent";
}
