import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { stripAnsi } from "../../src/modules/templates/template-text.ts";

/** One recorded exchange: the exact line the client sent (terminator included) and everything the device answered. */
export type SimulationEntry = { line: string; answer: string };

/** A recorded device session (an Oxidized `simulation.yaml`), escapes decoded. */
export type Simulation = {
  /** What the device printed after login, ending with its first prompt; "" for exec-channel families. */
  initPrompt: string;
  commands: SimulationEntry[];
  /** The recording is a list: entries are consumed in order (pagers, repeated commands). A map is reusable in any order. */
  ordered: boolean;
  /** Files the device serves over SCP, by path (a written session's `files`). */
  files?: Record<string, string>;
};

/** Which built-in template (collector/templates/<key>.yaml) speaks to each recorded family. */
export const FAMILY_TEMPLATES: Record<string, string> = {
  ios: "cisco-ios",
  nxos: "cisco-nxos",
  asa: "cisco-asa",
  junos: "juniper-junos",
  eos: "arista-eos",
  routeros: "mikrotik-routeros",
  fortigate: "fortinet-fortios",
  // Oxidized files FortiManager under its fortios model; its commands differ from a FortiGate's.
  fortios: "fortinet-fortimanager",
  aoscx: "aruba-aoscx",
  arubainstant: "aruba-instant",
  h3c: "hpe-comware",
  netgear: "netgear",
  vyos: "vyos",
  opnsense: "opnsense",
  tnsr: "netgate-tnsr",
  aosw: "aruba-aosw",
  eatonnetwork: "eaton-network",
  fastiron: "ruckus-fastiron",
  firelinuxos: "cisco-ftd",
  perle: "perle-iolan",
  procurve: "hpe-procurve",
  riverbed: "riverbed-rios",
  tplink: "tplink-jetstream",
  // Oxidized's cnos model (Centec CNOS) also serves FS.com switches, whose Centec-based OS is FSOS.
  cnos: "fs-fsos",
  mlnxos: "nvidia-onyx",
  vsololt: "vsol-olt",
};

/**
 * Recordings whose configuration is an excerpt a bug report quoted or a placeholder, not a whole configuration:
 * their template's config_marker is not in them, so the collector would rightly refuse them as output_invalid.
 */
export const EXCERPT_RECORDINGS: ReadonlySet<string> = new Set([
  "h3c#5130-48G_7.1.070",
  "nxos#dummy_no_show_inventory_all",
]);

const fixtureCandidates = () =>
  [
    process.env.OXIDIZED_FIXTURES,
    // Developers and CI both have the project's shared/ folder beside the checkout.
    join(import.meta.dirname, "..", "..", "..", "shared", "fixtures", "oxidized"),
  ].filter((dir): dir is string => !!dir);

/** Where the Oxidized recordings live (OXIDIZED_FIXTURES, else ../shared/fixtures/oxidized), if anywhere. */
export function findOxidizedFixturesDir(): string | undefined {
  return fixtureCandidates().find(
    (dir) => existsSync(dir) && readdirSync(dir).some((name) => name.endsWith("#simulation.yaml")),
  );
}

export function oxidizedFixturesDir(): string {
  const found = findOxidizedFixturesDir();
  if (!found)
    throw new Error(`no Oxidized recordings (*#simulation.yaml) found; looked in ${fixtureCandidates().join(", ")}`);
  return found;
}

/** Every `*#simulation.yaml` in the fixtures directory, as absolute paths, sorted. */
export function simulationFiles(dir = oxidizedFixturesDir()): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith("#simulation.yaml"))
    .sort()
    .map((name) => join(dir, name));
}

const ESCAPES: Record<string, string> = { r: "\r", n: "\n", t: "\t", e: "\x1b", b: "\b", '"': '"', "\\": "\\" };

/**
 * Decodes the Ruby-style escapes the recorder left in block scalars (`\r \n \t \e \b \xNN \" \\`).
 * An unknown escape stays as written: the recorder never produces one, so it is more likely literal text.
 */
export function decodeRubyEscapes(text: string): string {
  return text.replace(/\\(x[0-9A-Fa-f]{2}|.)/gs, (whole, code: string) => {
    if (code.length === 3) return String.fromCharCode(parseInt(code.slice(1), 16));
    return ESCAPES[code] ?? whole;
  });
}

/** Parses a simulation.yaml text. Keys are double-quoted YAML, so YAML already decoded them; only values carry Ruby escapes. */
export function parseSimulation(yamlText: string, source = "simulation"): Simulation {
  const doc = parse(yamlText) as { init_prompt?: unknown; commands?: unknown; files?: unknown } | null;
  if (!doc || typeof doc !== "object") throw new Error(`${source}: not a YAML mapping`);
  const files =
    doc.files === undefined
      ? undefined
      : Object.fromEntries(
          Object.entries(doc.files as object).map(([path, content]) => [
            path,
            decodeRubyEscapes(text(content, `${source}: files.${path}`)),
          ]),
        );
  const initPrompt = decodeRubyEscapes(text(doc.init_prompt, `${source}: init_prompt`));
  const raw = doc.commands;
  const entry = (line: string, answer: unknown): SimulationEntry => ({
    line,
    answer: decodeRubyEscapes(text(answer, `${source}: answer to ${JSON.stringify(line)}`)),
  });
  if (Array.isArray(raw)) {
    const commands = raw.map((item, i) => {
      const pairs = item && typeof item === "object" ? Object.entries(item as object) : [];
      if (pairs.length !== 1) throw new Error(`${source}: commands[${i}] must be a map with exactly one key`);
      return entry(pairs[0]![0], pairs[0]![1]);
    });
    return { initPrompt, commands, ordered: true, files };
  }
  if (raw && typeof raw === "object") {
    return {
      initPrompt,
      commands: Object.entries(raw as object).map(([line, answer]) => entry(line, answer)),
      ordered: false,
      files,
    };
  }
  throw new Error(`${source}: commands must be a map or a list of one-key maps`);
}

/** An empty YAML value (`init_prompt:` with nothing after it) is null: it means "". */
function text(value: unknown, what: string): string {
  if (value === null || value === undefined) return "";
  if (typeof value !== "string") throw new Error(`${what} must be text, got ${typeof value}`);
  return value;
}

export function loadSimulation(path: string): Simulation {
  return parseSimulation(readFileSync(path, "utf8"), path);
}

/** The line without its terminator ("\n", "\r\n" or "\r"). */
export function stripTerminator(line: string): string {
  return line.replace(/\r?\n$|\r$/, "");
}

/**
 * How the recorded device was driven. A shell session echoes each command at the start of its answer; an exec-channel
 * family does not (Junos keeps its login banner in init_prompt, so an empty init_prompt alone is not the test).
 */
export function recordedMode(simulation: Simulation): "shell" | "exec" {
  if (simulation.initPrompt === "") return "exec";
  const echoed = simulation.commands.some(({ line, answer }) => {
    const command = stripTerminator(line);
    // Some CLIs (ArubaOS-Switch / ProCurve) draw the echo with cursor-positioning sequences around and inside it.
    return command.length > 1 && (answer.startsWith(command) || stripAnsi(answer).startsWith(command));
  });
  return echoed ? "shell" : "exec";
}
