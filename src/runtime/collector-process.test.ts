import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { COLLECTOR_NODE_ARGS } from "./collector-process.ts";

describe("the collector process", () => {
  it("starts with the same Node options from `npm run collector` as beside the API", () => {
    const { scripts } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      scripts: Record<string, string>;
    };
    expect(scripts.collector).toBe(`exec node ${COLLECTOR_NODE_ARGS.join(" ")} dist/collector.js`);
  });
});
