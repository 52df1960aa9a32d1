import { describe, expect, it } from "vitest";
import { isNonPublicAddress, refusedAddress, refusedUrl } from "./target.ts";

/** The address classification behind the webhook target checks: every spelling of a blocked address is blocked. */

describe("webhook target addresses", () => {
  it("refuse the metadata address in every IPv6 form that carries it, whatever the private-range setting", () => {
    for (const address of [
      "169.254.169.254",
      "::ffff:169.254.169.254",
      "::ffff:a9fe:a9fe", // mapped
      "::ffff:0:a9fe:a9fe",
      "::ffff:0:169.254.169.254", // translated (SIIT)
      "::169.254.169.254", // compatible
      "64:ff9b::a9fe:a9fe", // NAT64, well-known prefix
      "64:ff9b:1::a9fe:a9fe",
      "64:ff9b:1:a9fe:a9:fe00::",
      "64:ff9b:1:0:a9:fea9:fe00:0", // NAT64 local use, /96, /48, /64
      "2002:a9fe:a9fe::1", // 6to4
      "2001:0:a9fe:a9fe::1",
      "2001:0:4136:e378:8000:63bf:5601:5601", // Teredo: the server, the client (inverted)
    ]) {
      expect(refusedAddress(address, true), address).toMatch(/is a link-local address/);
      expect(refusedUrl(address.includes(":") ? `http://[${address}]/` : `http://${address}/`, true), address).toMatch(
        /link-local/,
      );
    }
    expect(refusedUrl("http://[::ffff:0:a9fe:a9fe]/latest/meta-data/", true)).toBe(
      "::ffff:0:a9fe:a9fe (IPv4 169.254.169.254) is a link-local address (cloud metadata services live at 169.254.169.254)",
    );
  });

  it("refuse loopback and private addresses in those forms when private ranges are forbidden, and allow them otherwise", () => {
    for (const address of [
      "127.0.0.1",
      "::1",
      "::ffff:0:7f00:1",
      "64:ff9b:1::a00:1",
      "2002:c0a8:101::1",
      "::ffff:10.1.2.3",
    ]) {
      expect(refusedAddress(address, false), address).toMatch(/loopback|private/);
      expect(refusedAddress(address, true), address).toBeNull();
      expect(isNonPublicAddress(address), address).toBe(true);
    }
  });

  it("allow public addresses, also as IPv6 that carries a public IPv4 one", () => {
    for (const address of [
      "192.0.2.1",
      "8.8.8.8",
      "2606:4700:4700::1111",
      "::ffff:8.8.8.8",
      "::ffff:0:808:808",
      "64:ff9b::808:808",
    ]) {
      expect(refusedAddress(address, false), address).toBeNull();
    }
    expect(isNonPublicAddress("8.8.8.8")).toBe(false);
    expect(isNonPublicAddress("2606:4700:4700::1111")).toBe(false);
  });
});
