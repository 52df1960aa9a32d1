/**
 * AES-256-GCM under the app key (Web Crypto, so Node and Deno alike). Ciphertext is stored as
 * "v1.<iv>.<ciphertext+tag>" in base64 so a later key format can coexist during a rotation.
 */
export type SecretBox = {
  encrypt(plain: string): Promise<string>;
  decrypt(sealed: string): Promise<string>;
  /** The key stored configurations' secret values are digested with (configs/storage/secrets-digest.ts): HMAC(appKey, label). */
  secretsDigestKey: Uint8Array;
};

/** What the secrets digest key is derived from the app key with, so it is never the app key itself. */
const SECRETS_DIGEST_LABEL = "netkeep secrets digest";

const toB64 = (bytes: Uint8Array) => {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
};
const fromB64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

export class AppKeyError extends Error {}

/** Accepts Laravel-style "base64:<44 chars>" or bare base64 of exactly 32 bytes. */
export function parseAppKey(text: string): Uint8Array<ArrayBuffer> {
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = fromB64(text.trim().replace(/^base64:/, ""));
  } catch {
    throw new AppKeyError("APP_KEY must be base64 of 32 random bytes, e.g. base64:$(openssl rand -base64 32)");
  }
  if (bytes.length !== 32) {
    throw new AppKeyError(
      `APP_KEY must decode to 32 bytes, got ${bytes.length}; generate one with: openssl rand -base64 32`,
    );
  }
  return bytes;
}

export const generateAppKey = () => "base64:" + toB64(crypto.getRandomValues(new Uint8Array(32)));

type NodeCrypto = {
  createDecipheriv(
    algorithm: "aes-256-gcm",
    key: Uint8Array,
    iv: Uint8Array,
  ): {
    setAuthTag(tag: Uint8Array): void;
    update(data: Uint8Array): Uint8Array;
    final(): Uint8Array;
  };
};
const nodeCrypto = (globalThis as { process?: { getBuiltinModule?(id: string): unknown } }).process?.getBuiltinModule?.(
  "node:crypto",
) as NodeCrypto | undefined;
const TAG_BYTES = 16;

export async function createSecretBox(keyBytes: Uint8Array<ArrayBuffer>): Promise<SecretBox> {
  const key = await crypto.subtle.importKey("raw", keyBytes, "AES-GCM", false, ["encrypt", "decrypt"]);
  const hmacKey = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const secretsDigestKey = new Uint8Array(
    await crypto.subtle.sign("HMAC", hmacKey, new TextEncoder().encode(SECRETS_DIGEST_LABEL)),
  );
  /**
   * Where the runtime lends node:crypto, decrypting runs in place: Web Crypto's goes through the thread pool,
   * where a collector's logins queued behind its compressions (bench:collect: 90 ms to load a job's plan).
   */
  const decryptInPlace =
    nodeCrypto &&
    ((iv: Uint8Array, body: Uint8Array) => {
      const decipher = nodeCrypto.createDecipheriv("aes-256-gcm", keyBytes, iv);
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      const text = new TextDecoder();
      return (
        text.decode(decipher.update(body.subarray(0, body.length - TAG_BYTES)), { stream: true }) +
        text.decode(decipher.final())
      );
    });
  return {
    secretsDigestKey,
    async encrypt(plain) {
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, new TextEncoder().encode(plain));
      return `v1.${toB64(iv)}.${toB64(new Uint8Array(sealed))}`;
    },
    async decrypt(sealed) {
      const [version, iv, body] = sealed.split(".");
      if (version !== "v1" || !iv || !body) throw new Error("unrecognised secret format");
      if (decryptInPlace) return decryptInPlace(fromB64(iv), fromB64(body));
      const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: fromB64(iv) }, key, fromB64(body));
      return new TextDecoder().decode(plain);
    },
  };
}
