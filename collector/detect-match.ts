import type { DetectSection } from "../src/modules/templates/index.ts";
import { compileTemplatePattern } from "../src/modules/templates/index.ts";

/**
 * Which built-in template a device is, from what it showed (collector/detect-job.ts): each template's `detect`
 * section (template-schema.ts) against the banner, the prompt, the output of its version command and SNMP's
 * sysDescr. Pure: no I/O.
 */

/**
 * What a device showed: its banner, prompt line, each command run and what it printed, SNMP's sysDescr and
 * sysObjectID, and the capabilities of its NETCONF hello (asked only of a device that offers no shell).
 */
export type Evidence = {
  banner: string;
  prompt: string;
  outputs: Map<string, string>;
  sysDescr?: string;
  sysObjectId?: string;
  capabilities?: string[];
};

/** A template that can be detected. */
export type DetectCandidate = { id: number; key: string; vendor?: string; detect: DetectSection };

/** A template the evidence fits, how well (`score`) and by what, and the model and OS version it reads. */
export type DetectMatch = {
  template_id: number;
  template: string;
  vendor: string | null;
  score: number;
  matched_by: ("version" | "netconf_capability" | "sys_descr" | "sys_object_id" | "prompt" | "banner")[];
  model: string | null;
  os_version: string | null;
  serial: string | null;
};

/**
 * A version (or sysDescr, or NETCONF capability) match is what proposes a template; a sysObjectID prefix, a prompt or a banner only ranks
 * the ones that have it, the sysObjectID above the others as an agent reports it without being asked twice.
 */
const WEIGHTS = { version: 4, netconf_capability: 4, sys_descr: 4, sys_object_id: 2, prompt: 1, banner: 1 } as const;

/** Whether the OID is the prefix or lies under it (1.3.6.1.4.1.9 covers 1.3.6.1.4.1.9.1.1208, not 1.3.6.1.4.1.99). */
const under = (oid: string | undefined, prefix: string) =>
  oid !== undefined && (oid.replace(/^\./, "") + ".").startsWith(prefix + ".");

const sysDescrMarker = (c: DetectCandidate) => c.detect.sys_descr ?? c.detect.version;

const test = (source: string | undefined, role: "line" | "text", text: string | undefined) =>
  source !== undefined && text !== undefined && compileTemplatePattern(source, role).test(text);

/** The first group of the pattern's first match in the texts, trimmed; null when none has it. */
function firstGroup(source: string | undefined, texts: (string | undefined)[]): string | null {
  if (source === undefined) return null;
  const pattern = compileTemplatePattern(source, "text");
  for (const text of texts) {
    if (text === undefined) continue;
    const found = pattern
      .exec(text)
      ?.slice(1)
      .find((g) => g !== undefined)
      ?.trim();
    if (found) return found;
  }
  return null;
}

/** The templates whose prompt, banner, sysDescr marker or sysObjectID prefix fits: the likeliest families. */
export const hintedBy = (
  evidence: Pick<Evidence, "banner" | "prompt" | "sysDescr" | "sysObjectId">,
  candidates: DetectCandidate[],
): DetectCandidate[] =>
  candidates.filter(
    (c) =>
      test(c.detect.prompt, "line", evidence.prompt) ||
      test(c.detect.banner, "text", evidence.banner) ||
      test(sysDescrMarker(c), "text", evidence.sysDescr) ||
      c.detect.sys_object_id.some((prefix) => under(evidence.sysObjectId, prefix)),
  );

/** The commands worth running, most likely first: those of the hinted templates (hintedBy), then the rest. */
export function commandsToTry(
  evidence: Pick<Evidence, "banner" | "prompt" | "sysDescr" | "sysObjectId">,
  candidates: DetectCandidate[],
): string[] {
  // A NETCONF template (no `version`) is recognised by its hello, not by a command.
  return [
    ...new Set(
      [...hintedBy(evidence, candidates), ...candidates]
        .filter((c) => c.detect.version !== undefined)
        .map((c) => c.detect.command),
    ),
  ];
}

/**
 * The templates the evidence fits by version or sysDescr, best first. A generic family (`generic: true`) is left out
 * when a specific one fits: a switch running Linux is that switch.
 */
export function rankTemplates(evidence: Evidence, candidates: DetectCandidate[]): DetectMatch[] {
  const specific = rankAll(
    evidence,
    candidates.filter((c) => !c.detect.generic),
  );
  return specific.length
    ? specific
    : rankAll(
        evidence,
        candidates.filter((c) => c.detect.generic),
      );
}

/** Whether the evidence is enough to stop asking: a specific family fits it. */
export const settled = (evidence: Evidence, candidates: DetectCandidate[]): boolean =>
  rankAll(
    evidence,
    candidates.filter((c) => !c.detect.generic),
  ).length > 0;

function rankAll(evidence: Evidence, candidates: DetectCandidate[]): DetectMatch[] {
  const matches: DetectMatch[] = [];
  for (const c of candidates) {
    const output = evidence.outputs.get(c.detect.command);
    const by: DetectMatch["matched_by"] = [];
    if (test(c.detect.version, "text", output)) by.push("version");
    if (test(c.detect.netconf_capability, "text", evidence.capabilities?.join("\n"))) by.push("netconf_capability");
    if (test(sysDescrMarker(c), "text", evidence.sysDescr)) by.push("sys_descr");
    if (!by.length) continue;
    if (c.detect.sys_object_id.some((prefix) => under(evidence.sysObjectId, prefix))) by.push("sys_object_id");
    if (test(c.detect.prompt, "line", evidence.prompt)) by.push("prompt");
    if (test(c.detect.banner, "text", evidence.banner)) by.push("banner");
    const texts = [output, evidence.sysDescr];
    matches.push({
      template_id: c.id,
      template: c.key,
      vendor: c.vendor ?? null,
      score: by.reduce((n, b) => n + WEIGHTS[b], 0),
      matched_by: by,
      model: firstGroup(c.detect.model, texts),
      os_version: firstGroup(c.detect.os_version, texts),
      serial: firstGroup(c.detect.serial, texts),
    });
  }
  return matches.sort((a, b) => b.score - a.score || a.template.localeCompare(b.template));
}

/** The one template to propose: the best match, unless another scores as well (then the user chooses). */
export const proposalOf = (ranked: DetectMatch[]): DetectMatch | undefined =>
  ranked[0] && (ranked.length === 1 || ranked[1]!.score < ranked[0].score) ? ranked[0] : undefined;

/**
 * The inventory a backup's outputs show: the template's detect patterns over the output of its detect command,
 * when the backup ran it (cisco-ios runs `show version`); undefined when it did not.
 */
export function inventoryOf(
  detect: DetectSection | undefined,
  outputs: [command: string, output: string][],
): { model: string | null; osVersion: string | null; serial: string | null } | undefined {
  const text = detect && outputs.find(([command]) => command === detect.command)?.[1];
  if (!detect || text === undefined) return undefined;
  return {
    model: firstGroup(detect.model, [text]),
    osVersion: firstGroup(detect.os_version, [text]),
    serial: firstGroup(detect.serial, [text]),
  };
}
