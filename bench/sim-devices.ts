import type { ScriptAnswer } from "../test/helpers/fake-device.ts";
import { hostnameOf, iosInventory, iosRunningConfig, iosShowVersion, iosVtpStatus } from "./ios-config.ts";

/** What the simulated devices of bench/collect.ts know: each one's own login and its Cisco IOS-like shell. */

export const benchLogin = (index: number) => ({ username: "backup", password: `bench-pass-${index}` });

export const initialPrompt = (index: number) => `\r\n${hostnameOf(index)}#`;

/**
 * The answers of device `index` to what the built-in cisco-ios template sends, as the device prints them: echo,
 * output, then the prompt on its own line. Anything else is undefined, which the fake device records as unexpected.
 */
export function ciscoShell(index: number, configBytes: number): (line: string) => ScriptAnswer {
  const prompt = `${hostnameOf(index)}#`;
  const outputs: Record<string, () => string> = {
    "terminal length 0": () => "",
    "terminal width 0": () => "",
    // Generated per request, not kept: a thousand 100 KB configs would make the device process the memory hog.
    "show running-config": () => iosRunningConfig(index, configBytes),
    "show version": () => iosShowVersion(index),
    "show vtp status": () => iosVtpStatus(index),
    "show inventory": () => iosInventory(index),
  };
  return (line) => {
    if (line === "exit") return { answer: "exit\r\n", close: true };
    const output = outputs[line]?.();
    if (output === undefined) return undefined;
    return `${line}\r\n${output}${output ? "\r\n" : ""}${prompt}`;
  };
}
