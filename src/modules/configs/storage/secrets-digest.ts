/**
 * A digest of the secret values a stored text had masked, so a version can say its secrets changed (a rotated
 * key) without the values being stored: HMAC-SHA256 under a key derived from the app key (SecretBox.secretsDigestKey), so
 * a stolen database cannot be used to test guesses of a value without the app key too.
 */
import { createHmac } from "node:crypto";

/** The values in order, each length-prefixed so a value's boundary cannot move between two of them. */
export function secretsDigest(key: Uint8Array, values: readonly string[]): string {
  const hmac = createHmac("sha256", key);
  for (const v of values) hmac.update(`${v.length}:`).update(v);
  return hmac.digest("hex");
}
