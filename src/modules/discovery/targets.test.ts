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

describe("expandTargets refuses what no device answers at", () => {
  it("says why for a dotted quad out of range, 0.0.0.0/8, multicast, broadcast and ::", async () => {
    expect(
      (
        await expandTargets([
          "256.1.1.1",
          "0.0.0.0",
          "0.0.0.0/24",
          "223.255.255.250-224.0.0.5",
          "239.1.1.1",
          "255.255.255.255",
          "::",
          "ff02::1",
          "223.255.255.0/24",
        ])
      ).errors,
    ).toEqual({
      "addresses.0": ["256.1.1.1 is not an IPv4 address: each of its four numbers must be 0-255"],
      "addresses.1": [
        "0.0.0.0 is not a device address: 0.0.0.0/8, multicast, reserved and broadcast addresses are not scanned",
      ],
      "addresses.2": [
        "0.0.0.0/24 includes 0.0.0.1: 0.0.0.0/8, multicast, reserved and broadcast addresses are not scanned",
      ],
      "addresses.3": [
        "223.255.255.250-224.0.0.5 includes 224.0.0.5: 0.0.0.0/8, multicast, reserved and broadcast addresses are not scanned",
      ],
      "addresses.4": [
        "239.1.1.1 is not a device address: 0.0.0.0/8, multicast, reserved and broadcast addresses are not scanned",
      ],
      "addresses.5": [
        "255.255.255.255 is not a device address: 0.0.0.0/8, multicast, reserved and broadcast addresses are not scanned",
      ],
      "addresses.6": [":: is not a device address: the unspecified address :: is not scanned"],
      "addresses.7": ["ff02::1 is not a device address: IPv6 multicast addresses are not scanned"],
    });
  });

  it("resolves host names all at once, and names those that resolve to no device or do not answer in time", async () => {
    const asked: string[] = [];
    let allAsked: (ip: string) => void = () => {};
    const first = new Promise<string>((done) => (allAsked = done));
    // The first name answers only once the last was asked: names resolved one after another would wait forever.
    const resolve = (name: string) => {
      asked.push(name);
      if (asked.length === 3) allAsked("192.0.2.8");
      return name === "first.example.net"
        ? first
        : Promise.resolve(name === "sink.example.net" ? "0.0.0.0" : "192.0.2.7");
    };
    expect(
      await expandTargets(["first.example.net", "edge-1.example.net", "sink.example.net"], "targets", {
        resolve,
        timeoutMs: 600_000,
      }),
    ).toEqual({
      addresses: ["192.0.2.8", "192.0.2.7"],
      errors: {
        "targets.2": [
          "sink.example.net resolves to 0.0.0.0, which is not a device address: 0.0.0.0/8, multicast, reserved and broadcast addresses are not scanned",
        ],
      },
    });
    // A resolver that never answers is given up on after the timeout.
    const never = () => new Promise<string>(() => {});
    expect(await expandTargets(["slow.example.net"], "addresses", { resolve: never, timeoutMs: 1 })).toEqual({
      addresses: [],
      errors: { "addresses.0": ["slow.example.net did not resolve within 0.001 s; give its address instead"] },
    });
  });
});
