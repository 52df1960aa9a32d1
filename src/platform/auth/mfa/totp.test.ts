import { describe, expect, it } from "vitest";
import { base32Decode, base32Encode, hotp, matchingStep, otpauthUri, totpCode } from "./totp.ts";

const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));

describe("TOTP", () => {
  it("computes RFC 4226 appendix D's HOTP values", async () => {
    const key = ascii("12345678901234567890");
    const expected = [
      "755224",
      "287082",
      "359152",
      "969429",
      "338314",
      "254676",
      "287922",
      "162583",
      "399871",
      "520489",
    ];
    for (const [counter, value] of expected.entries()) expect(await hotp(key, counter)).toBe(value);
  });

  it("computes RFC 6238 appendix B's SHA-1 values (8 digits)", async () => {
    const key = ascii("12345678901234567890");
    const vectors: [number, string][] = [
      [59, "94287082"],
      [1111111109, "07081804"],
      [1111111111, "14050471"],
      [1234567890, "89005924"],
      [2000000000, "69279037"],
      [20000000000, "65353130"],
    ];
    for (const [seconds, value] of vectors) expect(await hotp(key, Math.floor(seconds / 30), 8)).toBe(value);
  });

  it("round-trips base32 (RFC 4648 test vector) and accepts a code one step either side, not two", async () => {
    expect(base32Encode(ascii("foobar"))).toBe("MZXW6YTBOI");
    expect(base32Decode("mzxw 6ytb-oi")).toEqual(ascii("foobar"));
    const secret = base32Encode(ascii("12345678901234567890"));
    const now = new Date(1111111111 * 1000);
    const code = await totpCode(secret, now);
    expect(await matchingStep(secret, code, now)).toBe(Math.floor(1111111111 / 30));
    expect(await matchingStep(secret, code, new Date(now.getTime() + 30_000))).toBe(Math.floor(1111111111 / 30));
    expect(await matchingStep(secret, code, new Date(now.getTime() + 60_000))).toBeNull();
    expect(await matchingStep(secret, "12345", now)).toBeNull();
  });

  it("writes the key URI authenticator apps read", () => {
    expect(otpauthUri({ issuer: "netkeep", account: "alice", secret: "JBSWY3DPEHPK3PXP" })).toBe(
      "otpauth://totp/netkeep:alice?secret=JBSWY3DPEHPK3PXP&issuer=netkeep&algorithm=SHA1&digits=6&period=30",
    );
  });
});
