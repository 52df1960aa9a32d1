import type { DetectSection } from "../src/modules/templates/index.ts";
import { compileTemplatePattern } from "../src/modules/templates/index.ts";

/**
 * What a device's SNMP system group says it is. Pure: the vendor knowledge is the built-in templates' `detect`
 * sections (collector/templates/*.yaml): the vendor is that of the templates whose `sys_object_id` holds the longest
 * prefix of sysObjectID, and the model and software version come from the `sys_descr_model` and
 * `sys_descr_os_version` patterns of the first of those whose `sys_descr` marker fits.
 */

/** A family as SNMP identification needs it: the vendor and the detect section of a built-in template. */
export type SnmpFamily = { vendor?: string; detect?: DetectSection };

export type Identity = { vendor?: string; model?: string; version?: string };

/** The first group that took part in the pattern's first match, trimmed. */
function firstGroup(source: string | undefined, text: string): string | undefined {
  if (source === undefined) return undefined;
  return (
    compileTemplatePattern(source, "text")
      .exec(text)
      ?.slice(1)
      .find((g) => g !== undefined)
      ?.trim() || undefined
  );
}

/** The enterprise number of an OID under 1.3.6.1.4.1, e.g. 9 for 1.3.6.1.4.1.9.1.1208. */
export function enterpriseOf(sysObjectId: string): number | undefined {
  const m = /^\.?1\.3\.6\.1\.4\.1\.(\d+)(?:\.|$)/.exec(sysObjectId);
  return m ? Number(m[1]) : undefined;
}

/** How long the longest of the family's sysObjectID prefixes that covers the OID is (0: none covers it). */
function coverage(family: SnmpFamily, oid: string): number {
  const prefixes = family.detect?.sys_object_id.filter((prefix) => `${oid}.`.startsWith(`${prefix}.`)) ?? [];
  return Math.max(0, ...prefixes.map((p) => p.split(".").length));
}

/**
 * The vendor (a template's vendor name), model and software version a device reports. `chassisModel` is
 * ENTITY-MIB's entPhysicalModelName of the chassis, the exact part number, preferred to sysDescr's wording.
 */
export function identify(
  sys: { sysObjectId?: string; sysDescr?: string; chassisModel?: string },
  families: SnmpFamily[],
): Identity {
  const oid = sys.sysObjectId?.replace(/^\./, "");
  const covering =
    oid === undefined || enterpriseOf(oid) === undefined
      ? []
      : families
          .map((family) => ({ family, length: coverage(family, oid) }))
          .filter((c) => c.length > 0)
          .sort((a, b) => b.length - a.length);
  const vendor = covering.find((c) => c.family.vendor)?.family.vendor;
  const descr = sys.sysDescr ?? "";
  const worded = covering.find(({ family }) => {
    const marker = family.detect!.sys_descr ?? family.detect!.version;
    return marker !== undefined && compileTemplatePattern(marker, "text").test(descr);
  })?.family.detect;
  const model = sys.chassisModel?.trim() || firstGroup(worded?.sys_descr_model, descr);
  const version = firstGroup(worded?.sys_descr_os_version, descr);
  return { ...(vendor && { vendor }), ...(model && { model }), ...(version && { version }) };
}
