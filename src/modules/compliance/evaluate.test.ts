import { describe, expect, it } from "vitest";
import { PARSED_KEPT, parsedPolicyOf } from "./evaluate.ts";

const definition = (n: number) => `// Description: rule ${n}\n#[must_match_regex]\n^hostname [a-z]+${n}$\n`;
const row = (n: number) => ({ definition: definition(n), definitionHash: `hash-${n}` });

describe("parsed policies kept across checks", () => {
  it("parses a definition once however many checks use it, and again only after the least recently used went", () => {
    const first = parsedPolicyOf(row(0));
    expect(parsedPolicyOf(row(0))).toBe(first);
    expect(parsedPolicyOf(row(1))).not.toBe(first);
    expect(first.rules.map((r) => r.description)).toEqual(["rule 0"]);

    // Policy 0, used last but one, survives PARSED_KEPT - 2 others; then enough others push it out.
    for (let n = 2; n < PARSED_KEPT; n++) parsedPolicyOf(row(n));
    expect(parsedPolicyOf(row(0))).toBe(first);
    for (let n = 100; n < 100 + PARSED_KEPT; n++) parsedPolicyOf(row(n));
    const again = parsedPolicyOf(row(0));
    expect(again).not.toBe(first);
    expect(again.rules.map((r) => r.description)).toEqual(["rule 0"]);
  });
});
