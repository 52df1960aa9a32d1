import { startFakeDevice, type FakeDevice, type FakeDeviceOptions, type ScriptAnswer } from "./fake-device.ts";

/**
 * A fake device that really applies configuration: an ssh2 server (fake-device.ts) whose script keeps a running
 * and a startup configuration and changes them as a device would, so a push is checked by what the device ends
 * up with, not by what was sent.
 *
 * - "ios": `configure terminal` ... `end`; lines go into the running configuration at once (an `interface` line
 *   opens its block, indented lines and `exit` as on IOS, `no <line>` removes one); a line whose first word IOS
 *   would not know is answered with `% Invalid input detected at '^' marker.` under a caret; `no username <u>`
 *   asks `[confirm]` and applies on Enter; `write memory` copies running to startup; `ip domain-name` is shown
 *   as `ip domain name`, as IOS-XE does.
 * - "smb": "ios" whose `write memory` asks `Overwrite file [startup-config].... (Y/N)[N] ?` and copies on Y
 *   (Cisco Small Business switches).
 * - "junos": `configure` opens a candidate (set/delete lines); `rollback 0` drops it; `commit confirmed <n>` and
 *   `commit and-quit` make it the running (and saved) configuration, or fail with `error:` when a BGP neighbor's
 *   group has no peer-as, as Junos does at commit; a line that is not set/delete is `syntax error.`.
 * - "iosxr": `configure terminal` opens a candidate (IOS-style lines, indented under their block; `no <line>` removes
 *   one); `commit` makes it the running configuration, or fails with `% Failed to commit` when a BGP neighbor has no
 *   remote-as, as XR checks at commit; `abort` drops it; `end` with uncommitted changes asks whether to commit them.
 *   Every exec command first prints the router's clock, as XR does.
 * - "panos": `configure` opens a candidate of set lines (`[edit]` above a `user@host#` prompt); `commit` makes it the
 *   running configuration after its job's progress, or fails validation (`Validation Error:` ... `Commit failed`) when
 *   a security rule names a zone the candidate lacks; `revert config` drops it; `exit` leaves configuration mode;
 *   `sett ...` is `Unknown command:`, a set line of one word `Invalid syntax.`.
 * - "gaia" (Check Point clish) and "screenos": set lines apply at once, with no configuration mode; `save config`
 *   copies running to startup. Gaia takes `lock database override` and refuses a line it does not know with
 *   `CLINFR0329  Invalid command:'...'.`; ScreenOS refuses one under `^-----unknown keyword <word>`.
 * All answer `show running-config` / `show configuration | display set` (shell or exec channel) from their state.
 */

export type ConfigFlavor = "ios" | "smb" | "junos" | "iosxr" | "panos" | "gaia" | "screenos";

export type ConfigState = {
  running: string[];
  /** What survives a reload: written by write memory (IOS); every commit (Junos, IOS XR). */
  startup: string[];
  /** Junos, IOS XR: the candidate being edited, undefined outside configuration mode. */
  candidate?: string[];
  /** Configuration lines the device was sent (in configuration mode), in order. */
  configLines: string[];
  commits: number;
};

export type ConfigDevice = FakeDevice & { state: ConfigState; prompt: string };

const IOS_WORDS = new Set([
  "hostname",
  "interface",
  "description",
  "ip",
  "ipv6",
  "no",
  "username",
  "ntp",
  "logging",
  "snmp-server",
  "banner",
  "vlan",
  "name",
  "shutdown",
  "service",
  "router",
  "network",
  "switchport",
  "spanning-tree",
  "aaa",
  "line",
  "transport",
  "access-list",
  "exit",
  "end",
]);

export const IOS_SHOW_RUN = "show running-config";
export const JUNOS_SHOW_CONFIG = "show configuration | display set";

/** Second words IOS knows after these first ones; a word not listed is refused under a caret, as IOS does. */
const IOS_SECOND_WORDS: Record<string, string[]> = {
  ntp: ["server", "peer", "source", "master", "authenticate"],
  logging: ["host", "buffered", "trap", "source-interface", "console"],
  ip: ["address", "route", "domain", "domain-name", "name-server", "access-list", "ssh", "helper-address"],
};

/** The word of a configuration line IOS would put its caret under, if any. */
function iosRefusedWord(line: string): string | undefined {
  const words = line.trim().split(/\s+/);
  if (!IOS_WORDS.has(words[0]!)) return words[0];
  const [command, next] = words[0] === "no" ? [words[1], words[2]] : [words[0], words[1]];
  const known = command === undefined ? undefined : IOS_SECOND_WORDS[command];
  return known && next !== undefined && !known.includes(next) ? next : undefined;
}

const crlf = (lines: string[]) => lines.map((l) => l + "\r\n").join("");

/** The IOS running configuration as `show running-config` prints it: blocks separated by "!". */
function iosText(running: string[]): string[] {
  const out: string[] = [];
  for (const line of running) {
    if (!line.startsWith(" ") && out.length) out.push("!");
    out.push(line);
  }
  return [...out, "!", "end"];
}

/** `smb`: Cisco Small Business switches, IOS-like, whose write memory asks before overwriting the startup file. */
function iosScript(hostname: string, state: ConfigState, smb = false) {
  let writing = false;
  let mode: "exec" | "config" | "config-if" = "exec";
  let block: string | undefined;
  let confirming: string | undefined;
  const prompt = () => (mode === "exec" ? `${hostname}#` : `${hostname}(${mode})#`);
  const reply = (line: string, output: string[] = []) => `${line}\r\n${crlf(output)}${prompt()}`;

  const blockRange = (header: string): [number, number] | undefined => {
    const start = state.running.indexOf(header);
    if (start < 0) return undefined;
    let end = start + 1;
    while (end < state.running.length && state.running[end]!.startsWith(" ")) end++;
    return [start, end];
  };
  const keyOf = (line: string) => {
    const words = line.trim().split(/\s+/);
    return words[0] === "ip" || words[0] === "ipv6"
      ? words.slice(0, 2).join(" ")
      : words[0] === "hostname" || words[0] === "description"
        ? words[0]
        : line.trim();
  };
  const apply = (line: string) => {
    // IOS-XE takes the old spelling and shows the new one.
    const trimmed = line.trim().replace(/^ip domain-name /, "ip domain name ");
    const negated = trimmed.startsWith("no ") ? trimmed.slice(3) : undefined;
    if (mode === "config-if" && block !== undefined) {
      const [start, end] = blockRange(block)!;
      const body = state.running.slice(start + 1, end);
      const kept = body.filter((l) =>
        negated === undefined ? keyOf(l) !== keyOf(trimmed) : l.trim() !== negated && keyOf(l) !== negated,
      );
      if (negated === undefined) kept.push(` ${trimmed}`);
      state.running.splice(start + 1, end - start - 1, ...kept);
      return;
    }
    if (negated !== undefined) {
      const range = blockRange(negated);
      if (range) state.running.splice(range[0], range[1] - range[0]);
      else
        state.running = state.running.filter(
          (l) => l !== negated && !(negated.startsWith("username ") && l.startsWith(`${negated} `)),
        );
      return;
    }
    if (trimmed.startsWith("interface ")) {
      if (!blockRange(trimmed)) state.running.push(trimmed);
      mode = "config-if";
      block = trimmed;
      return;
    }
    state.running = state.running.filter((l) => l.startsWith(" ") || keyOf(l) !== keyOf(trimmed));
    state.running.push(trimmed);
    if (trimmed.startsWith("hostname ")) hostname = trimmed.slice("hostname ".length);
  };

  return (line: string, via: "shell" | "exec"): ScriptAnswer => {
    if (via === "exec")
      return line === IOS_SHOW_RUN ? crlf(["Building configuration...", ...iosText(state.running)]) : undefined;
    if (writing) {
      writing = false;
      if (line !== "Y" && line !== "y") return reply(line);
      state.startup = [...state.running];
      return reply(line, ["Copy succeeded"]);
    }
    if (confirming !== undefined) {
      const confirmed = line === "" || line === "y";
      const pending = confirming;
      confirming = undefined;
      if (confirmed) apply(pending);
      return reply(line);
    }
    if (mode === "exec") {
      if (line === "exit") return { answer: "exit\r\n", close: true };
      if (line === "") return reply(line);
      if (line === "terminal length 0" || line === "terminal width 0") return reply(line);
      if (line === IOS_SHOW_RUN)
        return reply(line, [
          "Building configuration...",
          "",
          `Current configuration : 1024 bytes`,
          ...iosText(state.running),
        ]);
      if (line === "show startup-config") return reply(line, iosText(state.startup));
      if (line === "show version") return reply(line, ["Cisco IOS XE Software, Version 17.09.04a"]);
      if (line === "show vtp status") return reply(line, ["VTP Operating Mode                : Transparent"]);
      if (line === "show inventory") return reply(line, ['NAME: "Chassis", DESCR: "Cisco Catalyst 9300"']);
      if (line === "configure terminal") {
        mode = "config";
        return reply(line, ["Enter configuration commands, one per line.  End with CNTL/Z."]);
      }
      if (line === "write memory" && smb) {
        writing = true;
        return `${line}\r\nOverwrite file [startup-config].... (Y/N)[N] ?`;
      }
      if (line === "write memory") {
        state.startup = [...state.running];
        return reply(line, ["Building configuration...", "[OK]"]);
      }
      return reply(line, [`${" ".repeat(hostname.length + 1)}^`, "% Invalid input detected at '^' marker.", ""]);
    }
    // configuration mode
    if (line === "") return reply(line);
    state.configLines.push(line);
    const first = line.trim().split(/\s+/)[0]!;
    if (line.trim() === "end") {
      mode = "exec";
      block = undefined;
      return reply(line);
    }
    if (line.trim() === "exit") {
      mode = mode === "config-if" ? "config" : "exec";
      block = undefined;
      return reply(line);
    }
    const badWord = iosRefusedWord(line);
    if (badWord !== undefined) {
      const caret = " ".repeat(prompt().length + line.indexOf(badWord));
      return reply(line, [`${caret}^`, "% Invalid input detected at '^' marker.", ""]);
    }
    if (line.trim().split(/\s+/).length === 1 && first !== "shutdown")
      return reply(line, ["% Incomplete command.", ""]);
    if (/^\s*no username \S+$/.test(line)) {
      confirming = line.trim();
      return `${line}\r\nThis operation will remove all username related configurations with same name.Do you want to continue? [confirm]`;
    }
    // A top-level line in interface mode leaves the block, as IOS does.
    if (
      mode === "config-if" &&
      !line.startsWith(" ") &&
      ["interface", "hostname", "username", "ntp", "logging", "snmp-server", "vlan", "router", "banner"].includes(first)
    ) {
      mode = "config";
      block = undefined;
    }
    apply(line);
    return reply(line);
  };
}

function junosScript(hostname: string, state: ConfigState) {
  const user = "netkeep";
  const prompt = () => (state.candidate ? `\r\n[edit]\r\n${user}@${hostname}#` : `${user}@${hostname}>`);
  const reply = (line: string, output: string[] = []) => `${line}\r\n${crlf(output)}${prompt()}`;
  const commitErrors = (candidate: string[]): string[] => {
    const errors: string[] = [];
    for (const l of candidate) {
      const m = /^set protocols bgp group (\S+) neighbor (\S+)/.exec(l);
      if (m && !candidate.some((c) => c.startsWith(`set protocols bgp group ${m[1]} peer-as `))) {
        errors.push(
          `error: [edit protocols bgp group ${m[1]}]: Error in neighbor ${m[2]} of group ${m[1]}: peer-as not configured`,
        );
      }
    }
    return errors.length ? [...errors, "error: configuration check-out failed"] : [];
  };
  const commit = (_line: string): string[] | undefined => {
    const errors = commitErrors(state.candidate!);
    if (errors.length) return errors;
    state.running = [...state.candidate!];
    state.startup = [...state.candidate!];
    state.commits++;
    return undefined;
  };

  return (line: string, via: "shell" | "exec"): ScriptAnswer => {
    if (via === "exec") {
      if (line === JUNOS_SHOW_CONFIG || line === "show configuration | display omit") return crlf(state.running);
      return line === "show version" || line === "show chassis hardware" || line.startsWith("set cli ")
        ? crlf([`Hostname: ${hostname}`])
        : undefined;
    }
    if (!state.candidate) {
      if (line === "exit") return { answer: "exit\r\n", close: true };
      if (line === "" || line.startsWith("set cli ")) return reply(line);
      if (line === JUNOS_SHOW_CONFIG) return reply(line, state.running);
      if (line === "configure") {
        state.candidate = [...state.running];
        return reply(line, ["Entering configuration mode"]);
      }
      return reply(line, [`${" ".repeat(user.length + hostname.length + 2)}^`, "unknown command."]);
    }
    if (line === "") return reply(line);
    if (line.startsWith("set ") || line.startsWith("delete ")) state.configLines.push(line);
    const words = line.trim().split(/\s+/);
    if (words[0] === "set" && words.length >= 3) {
      if (!state.candidate.includes(line.trim())) state.candidate.push(line.trim());
      return reply(line);
    }
    if (words[0] === "delete" && words.length >= 2) {
      const path = `set ${words.slice(1).join(" ")}`;
      state.candidate = state.candidate.filter((l) => l !== path && !l.startsWith(`${path} `));
      return reply(line);
    }
    if (line === "rollback 0") {
      state.candidate = [...state.running];
      return reply(line, ["load complete"]);
    }
    const confirmed = /^commit confirmed (\d+)$/.exec(line);
    if (confirmed) {
      const errors = commit(line);
      if (errors) return reply(line, errors);
      return reply(line, [
        `commit confirmed will be automatically rolled back in ${confirmed[1]} minutes unless confirmed`,
        "commit complete",
      ]);
    }
    if (line === "commit" || line === "commit and-quit") {
      const errors = commit(line);
      if (errors) return reply(line, errors);
      if (line === "commit and-quit") state.candidate = undefined;
      return reply(line, ["commit complete", ...(line === "commit and-quit" ? ["Exiting configuration mode"] : [])]);
    }
    if (line === "exit configuration-mode" || line === "exit") {
      if (state.candidate.join("\n") !== state.running.join("\n"))
        return `${line}\r\nThe configuration has been changed but not committed\r\nExit with uncommitted changes? [yes,no] (yes) `;
      state.candidate = undefined;
      return reply(line, ["Exiting configuration mode"]);
    }
    if (line === "yes") {
      state.candidate = undefined;
      return reply(line, ["Exiting configuration mode"]);
    }
    return reply(line, [`${" ".repeat(user.length + hostname.length + 2 + line.length)}^`, "syntax error."]);
  };
}

const XR_WORDS = new Set([
  "hostname",
  "interface",
  "description",
  "ipv4",
  "ipv6",
  "shutdown",
  "router",
  "neighbor",
  "remote-as",
  "address-family",
  "ntp",
  "logging",
  "username",
  "group",
  "snmp-server",
  "no",
]);
/** XR stamps every exec command's output with the router's clock. */
const XR_CLOCK = "Tue Nov 24 14:00:01.234 UTC";

/** BGP neighbors without a remote-as under them: XR refuses such a commit. */
function xrCommitErrors(candidate: string[]): string[] {
  const errors: string[] = [];
  candidate.forEach((line, i) => {
    const m = /^ neighbor (\S+)$/.exec(line);
    if (!m) return;
    let j = i + 1;
    let hasRemoteAs = false;
    for (; j < candidate.length && candidate[j]!.startsWith("  "); j++)
      if (candidate[j]!.trim().startsWith("remote-as ")) hasRemoteAs = true;
    if (!hasRemoteAs) errors.push(`!!% Neighbor ${m[1]}: remote-as must be configured`);
  });
  return errors.length
    ? [
        "% Failed to commit one or more configuration items during a pseudo-atomic operation. All changes made have been reverted. Please issue 'show configuration failed [inheritance]' from this session to view the errors",
        ...errors,
      ]
    : [];
}

function iosxrScript(hostname: string, state: ConfigState) {
  const node = "RP/0/RSP0/CPU0";
  const prompt = () => (state.candidate ? `${node}:${hostname}(config)#` : `${node}:${hostname}#`);
  const reply = (line: string, output: string[] = []) => `${line}\r\n${crlf(output)}${prompt()}`;
  let askingToCommit = false;
  /** The top-level line whose block indented lines go into. */
  let block: string | undefined;
  const showRun = () => [
    XR_CLOCK,
    "Building configuration...",
    "!! IOS XR Configuration 7.5.2",
    ...state.running,
    "end",
  ];
  const commit = (): string[] => {
    const errors = xrCommitErrors(state.candidate!);
    if (errors.length) {
      state.candidate = [...state.running];
      return errors;
    }
    state.running = [...state.candidate!];
    state.startup = [...state.candidate!];
    state.commits++;
    return [];
  };

  return (line: string, via: "shell" | "exec"): ScriptAnswer => {
    if (via === "exec") return line === IOS_SHOW_RUN ? crlf(showRun()) : undefined;
    if (askingToCommit) {
      askingToCommit = false;
      if (line === "cancel" || line === "") return reply(line);
      const errors = line === "yes" ? commit() : [];
      state.candidate = undefined;
      return reply(line, errors);
    }
    if (!state.candidate) {
      if (line === "exit") return { answer: "exit\r\n", close: true };
      if (line === "") return reply(line);
      if (line === "terminal length 0" || line === "terminal width 0") return reply(line, [XR_CLOCK]);
      if (line === IOS_SHOW_RUN) return reply(line, showRun());
      if (line === "show version") return reply(line, [XR_CLOCK, "Cisco IOS XR Software, Version 7.5.2"]);
      if (line === "configure terminal") {
        state.candidate = [...state.running];
        block = undefined;
        return reply(line, [XR_CLOCK]);
      }
      return reply(line, [`${" ".repeat(prompt().length)}^`, "% Invalid input detected at '^' marker."]);
    }
    // configuration mode
    if (line === "") return reply(line);
    state.configLines.push(line);
    const trimmed = line.trim();
    if (trimmed === "commit") return reply(line, commit());
    if (trimmed === "abort") {
      state.candidate = undefined;
      return reply(line);
    }
    if (trimmed === "end") {
      if (state.candidate.join("\n") !== state.running.join("\n")) {
        askingToCommit = true;
        return `${line}\r\nUncommitted changes found, commit them before exiting(yes/no/cancel)? [cancel]:`;
      }
      state.candidate = undefined;
      return reply(line);
    }
    const first = trimmed.split(/\s+/)[0]!;
    if (!XR_WORDS.has(first))
      return reply(line, [
        `${" ".repeat(prompt().length + line.indexOf(first))}^`,
        "% Invalid input detected at '^' marker.",
      ]);
    if (first === "no") {
      const negated = line.replace(/^(\s*)no /, "$1");
      state.candidate = state.candidate.filter((l) => l !== negated);
    } else if (!line.startsWith(" ")) {
      // a top-level line opens (or reopens) its block
      if (!state.candidate.includes(line)) state.candidate.push(line);
      block = line;
    } else {
      // an indented line goes at the end of its block, once
      const start = block === undefined ? -1 : state.candidate.indexOf(block);
      let end = start + 1;
      while (start >= 0 && end < state.candidate.length && state.candidate[end]!.startsWith(" ")) end++;
      if (start < 0) state.candidate.push(line);
      else if (!state.candidate.slice(start + 1, end).includes(line)) state.candidate.splice(end, 0, line);
    }
    return reply(line);
  };
}

export const PANOS_SHOW_CONFIG = "show config running";

/** Security rules naming a zone the candidate does not define: PAN-OS refuses such a commit at validation. */
function panosCommitErrors(candidate: string[]): string[] {
  const errors: string[] = [];
  for (const l of candidate) {
    const m = /^set rulebase security rules (\S+) (from|to) (\S+)$/.exec(l);
    if (m && !candidate.some((c) => c.startsWith(`set zone ${m[3]} `)))
      errors.push(` rulebase -> security -> rules -> ${m[1]} -> ${m[2]} '${m[3]}' is not a valid reference`);
  }
  return errors.length ? ["Validation Error:", ...errors, "Commit failed"] : [];
}

function panosScript(hostname: string, state: ConfigState) {
  const user = "netkeep";
  const prompt = () => (state.candidate ? `\r\n[edit]\r\n${user}@${hostname}# ` : `${user}@${hostname}> `);
  const reply = (line: string, output: string[] = []) => `${line}\r\n${crlf(output)}${prompt()}`;

  return (line: string, via: "shell" | "exec"): ScriptAnswer => {
    if (via === "exec") return undefined;
    if (!state.candidate) {
      if (line === "quit" || line === "exit") return { answer: `${line}\r\n`, close: true };
      if (line === "" || line === "set cli pager off") return reply(line);
      if (line === PANOS_SHOW_CONFIG)
        return reply(line, ["config {", ...state.running.map((l) => `  ${l.slice(4)};`), "}"]);
      if (line === "configure") {
        state.candidate = [...state.running];
        return reply(line, ["Entering configuration mode"]);
      }
      return reply(line, [`Unknown command: ${line.split(" ")[0]}`]);
    }
    if (line === "") return reply(line);
    state.configLines.push(line);
    const words = line.trim().split(/\s+/);
    if (words[0] === "set") {
      if (words.length < 3) return reply(line, ["Invalid syntax."]);
      if (!state.candidate.includes(line.trim())) state.candidate.push(line.trim());
      return reply(line);
    }
    if (line === "commit") {
      const errors = panosCommitErrors(state.candidate);
      const progress = ["Commit job 1234 is in progress. Use Ctrl+C to return to command prompt", "..55%...100%"];
      if (errors.length) return reply(line, [...progress, ...errors]);
      state.running = [...state.candidate];
      state.startup = [...state.candidate];
      state.commits++;
      return reply(line, [...progress, "Configuration committed successfully"]);
    }
    if (line === "revert config") {
      state.candidate = [...state.running];
      return reply(line);
    }
    if (line === "exit" || line === "quit") {
      // uncommitted changes stay in the candidate, as on PAN-OS; this fake keeps only what was committed
      state.candidate = undefined;
      return reply(line, ["Exiting configuration mode"]);
    }
    return reply(line, [`Unknown command: ${words[0]}`]);
  };
}

/** Families whose set lines apply at once (Check Point Gaia clish, ScreenOS): the first words each one knows. */
const IMMEDIATE_FLAVORS = {
  gaia: { prompt: (h: string) => `${h}> `, known: ["set", "add", "delete", "lock"], showConfig: "show configuration" },
  screenos: { prompt: (h: string) => `${h}-> `, known: ["set", "unset"], showConfig: "get config" },
} as const;

function immediateScript(flavor: keyof typeof IMMEDIATE_FLAVORS) {
  return (hostname: string, state: ConfigState) => {
    const { prompt, known, showConfig } = IMMEDIATE_FLAVORS[flavor];
    const reply = (line: string, output: string[] = []) => `${line}\r\n${crlf(output)}${prompt(hostname)}`;
    return (line: string, via: "shell" | "exec"): ScriptAnswer => {
      if (via === "exec") return undefined;
      if (line === "exit") return { answer: "exit\r\n", close: true };
      if (
        line === "" ||
        line === "lock database override" ||
        line === "set clienv rows 0" ||
        line === "set console page 0"
      )
        return reply(line);
      if (line === showConfig) return reply(line, state.running);
      if (line === "save config") {
        state.startup = [...state.running];
        return reply(line, flavor === "screenos" ? ["Save system configuration ...", "Done"] : []);
      }
      state.configLines.push(line);
      const words = line.trim().split(/\s+/);
      if (!(known as readonly string[]).includes(words[0]!) || words.length < 3) {
        return reply(
          line,
          flavor === "gaia"
            ? [`CLINFR0329  Invalid command:'${line}'.`]
            : [`${" ".repeat(prompt(hostname).length)}^-----unknown keyword ${words[0]}`],
        );
      }
      if (!state.running.includes(line.trim())) state.running.push(line.trim());
      return reply(line);
    };
  };
}

export type ConfigDeviceOptions = {
  flavor: ConfigFlavor;
  hostname: string;
  /** The starting running (and startup) configuration: IOS or IOS XR top-level and indented lines without "!", or Junos or PAN-OS set lines. */
  running: string[];
  auth: FakeDeviceOptions["auth"];
} & Pick<FakeDeviceOptions, "latencyMs" | "hostKey" | "port">;

/** Starts a device that applies what it is sent; `state` is its configuration as it stands. */
export async function startConfigDevice(options: ConfigDeviceOptions): Promise<ConfigDevice> {
  const state: ConfigState = {
    running: [...options.running],
    startup: [...options.running],
    configLines: [],
    commits: 0,
  };
  const flavors = {
    ios: { script: iosScript, prompt: `${options.hostname}#`, configCommand: IOS_SHOW_RUN },
    smb: {
      script: (h: string, st: ConfigState) => iosScript(h, st, true),
      prompt: `${options.hostname}#`,
      configCommand: IOS_SHOW_RUN,
    },
    junos: { script: junosScript, prompt: `netkeep@${options.hostname}>`, configCommand: JUNOS_SHOW_CONFIG },
    iosxr: { script: iosxrScript, prompt: `RP/0/RSP0/CPU0:${options.hostname}#`, configCommand: IOS_SHOW_RUN },
    panos: { script: panosScript, prompt: `netkeep@${options.hostname}> `, configCommand: PANOS_SHOW_CONFIG },
    gaia: {
      script: immediateScript("gaia"),
      prompt: `${options.hostname}> `,
      configCommand: IMMEDIATE_FLAVORS.gaia.showConfig,
    },
    screenos: {
      script: immediateScript("screenos"),
      prompt: `${options.hostname}-> `,
      configCommand: IMMEDIATE_FLAVORS.screenos.showConfig,
    },
  };
  const flavor = flavors[options.flavor];
  const script = flavor.script(options.hostname, state);
  const prompt = flavor.prompt;
  const device = await startFakeDevice({
    script,
    initPrompt: `\r\n${prompt}`,
    mode: "both",
    auth: options.auth,
    latencyMs: options.latencyMs,
    hostKey: options.hostKey,
    port: options.port,
    configCommand: flavor.configCommand,
  });
  return Object.assign(device, { state, prompt });
}
