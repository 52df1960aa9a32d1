import { describe, expect, it } from "vitest";
import { compileTemplatePattern, isShippedPattern } from "./template-patterns.ts";

// A secret pattern of the built-in cisco-ios template (collector/templates/cisco-ios.yaml), with lookahead.
const IOS_KEY_SECRET = String.raw`^(\s*security wpa psk set-key (?:ascii|hex)(?: \d)?) (?!<)\S.*$`;

describe("template patterns", () => {
  it("run a shipped pattern in JavaScript's engine in the role it ships in", () => {
    expect(isShippedPattern(IOS_KEY_SECRET, "text")).toBe(true);
    expect(
      compileTemplatePattern(IOS_KEY_SECRET, "text").replaceAll(
        " security wpa psk set-key ascii 0 abc\n security wpa psk set-key <hidden>",
        "$1 <hidden>",
      ),
    ).toBe(" security wpa psk set-key ascii 0 <hidden>\n security wpa psk set-key <hidden>");
  });

  it("count a built-in template's push errors and prompts as shipped line patterns (they run on every line pushed)", () => {
    expect(
      isShippedPattern(
        String.raw`^\s*% ?(?:Invalid input|Incomplete command|Ambiguous command|Unknown command|Unrecognized command)`,
        "line",
      ),
    ).toBe(true);
    expect(isShippedPattern(String.raw`\[confirm\] ?$`, "line")).toBe(true);
  });

  it("run it in RE2 in another role, or changed, where what RE2 lacks is refused", () => {
    expect(isShippedPattern(IOS_KEY_SECRET, "line")).toBe(false);
    expect(() => compileTemplatePattern(IOS_KEY_SECRET, "line")).toThrow(/^uses lookahead/);
    expect(() => compileTemplatePattern(`${IOS_KEY_SECRET} `, "text")).toThrow(/^uses lookahead/);
  });
});
