import { describe, expect, it } from "vitest";
import { createSecretBox, generateAppKey, parseAppKey } from "./box.ts";

describe("the secret box", () => {
  it("opens what it sealed, short or long, any script; a changed byte or another key is refused", async () => {
    const box = await createSecretBox(parseAppKey(generateAppKey()));
    const texts = [
      "",
      "s3cret!",
      "pässwörd ключ 密码",
      `-----BEGIN OPENSSH PRIVATE KEY-----\n${"QUJD".repeat(800)}\n-----END OPENSSH PRIVATE KEY-----\n`,
    ];
    for (const text of texts) {
      const sealed = await box.encrypt(text);
      if (text) expect(sealed).not.toContain(text);
      expect(await box.decrypt(sealed)).toBe(text);
    }
    const sealed = await box.encrypt("s3cret!");
    const [version, iv, body] = sealed.split(".") as [string, string, string];
    const bytes = Uint8Array.from(atob(body), (c) => c.charCodeAt(0));
    bytes[0]! ^= 1;
    await expect(box.decrypt(`${version}.${iv}.${btoa(String.fromCharCode(...bytes))}`)).rejects.toThrow();
    const other = await createSecretBox(parseAppKey(generateAppKey()));
    await expect(other.decrypt(sealed)).rejects.toThrow();
    await expect(box.decrypt("v2.abc.def")).rejects.toThrow(/unrecognised secret format/);
  });

  it("seals as plain AES-256-GCM (iv, then ciphertext and tag): what Web Crypto alone opens", async () => {
    const keyBytes = parseAppKey(generateAppKey());
    const sealed = await (await createSecretBox(keyBytes)).encrypt("enable secret");
    const [, iv, body] = sealed.split(".") as [string, string, string];
    const key = await crypto.subtle.importKey("raw", keyBytes, "AES-GCM", false, ["decrypt"]);
    const bytes = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: bytes(iv) }, key, bytes(body));
    expect(new TextDecoder().decode(plain)).toBe("enable secret");
  });
});
