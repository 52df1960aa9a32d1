import { describe, expect, it } from "vitest";
import { compileTemplatePattern, isShippedPattern } from "./template-patterns.ts";

// A secret pattern of the built-in cisco-ios template (collector/templates/cisco-ios.yaml), with lookahead.
const IOS_KEY_SECRET = String.raw`\b((?:server-key|key-string|wpa-psk ascii|pre-shared-key|authentication-key|key)(?: [0-7])?) (?!<)(?!(?:chain|config-key|generate|pubkey-chain)\b)\S+`;

describe("template patterns", () => {
  it("run a shipped pattern in JavaScript's engine in the role it ships in", () => {
    expect(isShippedPattern(IOS_KEY_SECRET, "text")).toBe(true);
    expect(compileTemplatePattern(IOS_KEY_SECRET, "text").replaceAll(" key 7 abc\nkey chain X", "$1 <hidden>")).toBe(" key 7 <hidden>\nkey chain X");
  });

  it("count a built-in template's push errors and prompts as shipped line patterns (they run on every line pushed)", () => {
    expect(isShippedPattern(String.raw`^\s*% ?(?:Invalid input|Incomplete command|Ambiguous command|Unknown command|Unrecognized command)`, "line")).toBe(true);
    expect(isShippedPattern(String.raw`\[confirm\] ?$`, "line")).toBe(true);
  });

  it("run it in RE2 in another role, or changed, where what RE2 lacks is refused", () => {
    expect(isShippedPattern(IOS_KEY_SECRET, "line")).toBe(false);
    expect(() => compileTemplatePattern(IOS_KEY_SECRET, "line")).toThrow(/^uses lookahead/);
    expect(() => compileTemplatePattern(`${IOS_KEY_SECRET} `, "text")).toThrow(/^uses lookahead/);
  });
});
