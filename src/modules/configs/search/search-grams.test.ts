import { describe, expect, it } from "vitest";
import { mulberry32 } from "../../../kernel/random.ts";
import { NO_COMMON_GRAMS } from "./search-common-grams.ts";
import { GRAM, gramDocument } from "./search-grams.ts";

/** The tokens by their definition: every window of GRAM units of each line padded with "\n", letters folded. */
function referenceTokens(lines: string[]): Set<string> {
  const tokens = new Set<string>();
  for (const line of lines) {
    let coded = "";
    for (const ch of line + "\n".repeat(3)) {
      for (let i = 0; i < ch.length; i++) {
        let c = ch.charCodeAt(i);
        if (c >= 0x41 && c <= 0x5a) c += 0x20;
        coded += String.fromCharCode(c < 0x80 ? c + 0x100 : c >= 0xd800 && c <= 0xdfff ? 0xfffd : c);
      }
    }
    for (let i = 0; i + GRAM <= coded.length; i++) tokens.add(coded.slice(i, i + GRAM));
  }
  return tokens;
}

describe("gramDocument", () => {
  it("holds every window of every line exactly once, including windows whose hashes collide", () => {
    // ~300,000 distinct windows over a small alphabet: tens of 30-bit hash collisions are expected among them.
    const next = mulberry32(7);
    const alphabet = "abcdefghijKLMNOP0123456789 .:/-é\u{1F600}";
    const units = [...alphabet];
    const lines = Array.from({ length: 20_000 }, () =>
      Array.from({ length: Math.floor(next() * 30) }, () => units[Math.floor(next() * units.length)]).join(""),
    );
    const tokens = gramDocument(lines, NO_COMMON_GRAMS).split(" ");
    expect(tokens.length).toBe(new Set(tokens).size);
    const reference = referenceTokens(lines);
    expect(reference.size).toBeGreaterThan(200_000);
    expect(new Set(tokens)).toEqual(reference);
  });

  it("gives nothing for lines too short to hold a searchable literal", () => {
    expect(gramDocument(["", "ab"], NO_COMMON_GRAMS)).toBe("");
    expect(gramDocument(["abc"], NO_COMMON_GRAMS).split(" ")).toHaveLength(1);
  });

  it("leaves the common tokens out", () => {
    const all = gramDocument(["interface Gi1/0/1"], NO_COMMON_GRAMS).split(" ");
    const common = new Set(all.slice(0, 3));
    const rest = gramDocument(["interface Gi1/0/1"], { ...NO_COMMON_GRAMS, key: "k", count: 3, grams: common }).split(
      " ",
    );
    expect(new Set(rest)).toEqual(new Set(all.filter((token) => !common.has(token))));
  });
});
