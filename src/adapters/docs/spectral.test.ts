import { Spectral } from "@stoplight/spectral-core";
import { oas } from "@stoplight/spectral-rulesets";
import { describe, expect, it } from "vitest";
import { API_VERSIONS, openApiDocument } from "../api/versions.ts";

/**
 * The generated API descriptions held to Spectral's `oas` ruleset (what `spectral lint` runs with
 * `extends: spectral:oas`), on the document exactly as served: no error, and fewer than 10 warnings each.
 */
const SEVERITY = ["error", "warning", "information", "hint"] as const;

describe.each(API_VERSIONS)("the %s OpenAPI document under Spectral's oas rules", (version) => {
  it("has no error and fewer than 10 warnings", async () => {
    const spectral = new Spectral();
    spectral.setRuleset(oas as Parameters<Spectral["setRuleset"]>[0]);
    const document = JSON.parse(JSON.stringify(openApiDocument(version, "https://netkeep.example.test")));
    const results = await spectral.run(document);
    const lines = results.map((r) => `${SEVERITY[r.severity]} ${r.code} at ${r.path.join(".")}: ${r.message}`);
    expect(
      lines.filter((l) => l.startsWith("error")),
      lines.join("\n"),
    ).toEqual([]);
    expect(lines.filter((l) => l.startsWith("warning")).length, lines.join("\n")).toBeLessThan(10);
  }, 60_000);
});
