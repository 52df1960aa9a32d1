import { startFakeDevice, type FakeDevice, type FakeDeviceAuth } from "./fake-device.ts";

/**
 * A fake device of a built-in template's family that prints a given configuration: it answers the template's
 * configuration command with it (on a shell, or an exec channel for templates that use one), any other command
 * with a line of its own, and speaks the family's prompt. For checks of what netkeep stores from a real
 * configuration (secret masking) through the real session and store path, without a recording per file.
 */

/** A prompt each family's template recognises, by template key. */
export const FAMILY_PROMPTS: Record<string, string> = {
  "arista-eos": "leaf1#",
  "checkpoint-gaia": "gw-01> ",
  "cisco-asa": "asa-01#",
  "cisco-ios": "r1#",
  "cisco-iosxr": "RP/0/RSP0/CPU0:xr1#",
  "cisco-nxos": "nx1#",
  "cumulus-frr": "leaf1#",
  "f5-tmos": "admin@(bigip1)(cfg-sync Standalone)(Active)(/Common)(tmos)# ",
  "fortinet-fortios": "FGT-01 # ",
  "juniper-junos": "netkeep@mx1> ",
  "nokia-sros": "A:sr1# ",
  "paloalto-panos": "admin@pa-01> ",
};

export async function startFamilyDevice(options: {
  family: string;
  configCommand: string;
  config: string;
  auth: FakeDeviceAuth;
}): Promise<FakeDevice> {
  const prompt = FAMILY_PROMPTS[options.family];
  if (!prompt) throw new Error(`no prompt for family ${options.family}`);
  const crlf = (text: string) => text.replace(/\r?\n/g, "\r\n");
  const output = (line: string) =>
    line === options.configCommand ? crlf(options.config.replace(/\n+$/, "")) : `${line.split(" ")[0]}: ok`;
  return startFakeDevice({
    auth: options.auth,
    mode: "both",
    initPrompt: `\r\n${prompt}`,
    configCommand: options.configCommand,
    script: (line, via) => {
      if (via === "exec") return `${output(line)}\r\n`;
      if (line === "exit" || line === "quit") return { answer: `${line}\r\n`, close: true };
      if (line === "") return `\r\n${prompt}`;
      return `${line}\r\n${output(line)}\r\n${prompt}`;
    },
  });
}
