import { describe, expect, it } from "vitest";
import { isPublicKey, newKeyPair, open, seal } from "./sealed-box.ts";

describe("sealed boxes", () => {
  it("open only with the recipient's private key, and not once altered", () => {
    const alice = newKeyPair();
    const mallory = newKeyPair();
    expect(isPublicKey(alice.publicKey)).toBe(true);
    expect(isPublicKey("not a key")).toBe(false);
    const sealed = seal(alice.publicKey, '{"password":"s3cret"}');
    expect(sealed).not.toContain("s3cret");
    expect(Buffer.from(sealed, "base64").toString("latin1")).not.toContain("s3cret");
    expect(open(alice, sealed)).toBe('{"password":"s3cret"}');
    // A fresh ephemeral key each time: the same message never seals the same way twice.
    expect(seal(alice.publicKey, "x")).not.toBe(seal(alice.publicKey, "x"));
    expect(() => open(mallory, sealed)).toThrow();
    const bytes = Buffer.from(sealed, "base64");
    bytes[bytes.length - 1]! ^= 1;
    expect(() => open(alice, bytes.toString("base64"))).toThrow();
  });
});
