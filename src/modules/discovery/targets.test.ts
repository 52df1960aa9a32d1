import { describe, expect, it } from "vitest";
import { expandTargets } from "./targets.ts";

describe("expandTargets", () => {
  it("expands subnets without their network and broadcast addresses, ranges in either notation, and drops repeats", async () => {
    expect(await expandTargets(["192.0.2.0/30", "192.0.2.1-3", "198.51.100.7/32", "2001:db8::1"])).toEqual({
      addresses: ["192.0.2.1", "192.0.2.2", "192.0.2.3", "198.51.100.7", "2001:db8::1"],
      errors: {},
    });
  });

  it("takes a /20 and refuses a /19, and a range over 4096 addresses", async () => {
    expect((await expandTargets(["10.0.0.0/20"])).addresses).toHaveLength(4094);
    expect((await expandTargets(["10.0.0.0/19", "10.0.0.0-10.0.16.0"])).errors).toEqual({
      "addresses.0": ["10.0.0.0/19 is a /19: a subnet may be at most a /20 (4096 addresses); split it"],
      "addresses.1": ["10.0.0.0-10.0.16.0 holds 4097 addresses: a range may hold at most 4096"],
    });
  });
});
