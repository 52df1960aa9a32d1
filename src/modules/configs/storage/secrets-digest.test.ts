import { describe, expect, it } from "vitest";
import { sameDigestKey, secretsDigest, zoneDigestLabel, zoneSecretsDigestKey } from "./secrets-digest.ts";

const appKey = new Uint8Array(32).fill(7);

describe("digests of masked values made at a remote zone's site", () => {
  it("use a key of their zone's own, which is neither the app's nor another zone's", () => {
    const values = ["Ios-Comm-1"];
    const app = secretsDigest(appKey, values);
    const zone2 = secretsDigest(zoneSecretsDigestKey(appKey, 2), values);
    const zone3 = secretsDigest(zoneSecretsDigestKey(appKey, 3), values);
    expect(new Set([app, zone2, zone3]).size).toBe(3);
    // The same zone's key again gives the same digest: two collectors of one zone agree.
    expect(secretsDigest(zoneSecretsDigestKey(appKey, 2), values)).toBe(zone2);
  });

  it("are compared only with digests made under the same key", () => {
    const app = secretsDigest(appKey, ["a"]);
    const zone2 = zoneDigestLabel(2, secretsDigest(zoneSecretsDigestKey(appKey, 2), ["a"]));
    const zone2b = zoneDigestLabel(2, secretsDigest(zoneSecretsDigestKey(appKey, 2), ["b"]));
    expect(sameDigestKey(zone2, zone2b)).toBe(true);
    expect(sameDigestKey(app, secretsDigest(appKey, ["b"]))).toBe(true);
    expect(sameDigestKey(app, zone2)).toBe(false);
    expect(sameDigestKey(zone2, zoneDigestLabel(3, "0".repeat(64)))).toBe(false);
  });
});
