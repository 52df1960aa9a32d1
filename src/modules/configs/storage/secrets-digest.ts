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

/**
 * The key a remote zone's collectors digest with: derived from the app's digest key and the zone, sealed to the
 * collector in each job. A site can make digests for its own zone only, never learns the app's key, and sends
 * only the digest: the values it masked never leave it. Such digests are stored labelled `zone-<id>:` so they are
 * compared only with digests made under the same key (zoneDigestLabel, sameDigestKey).
 */
export function zoneSecretsDigestKey(appDigestKey: Uint8Array, zoneId: number): Uint8Array {
  return new Uint8Array(createHmac("sha256", appDigestKey).update(`netkeep zone ${zoneId} secrets digest`).digest());
}

/** How a digest made under a zone's key is stored: labelled with its key, so it is compared only with its kind. */
export const zoneDigestLabel = (zoneId: number, digest: string) => `zone-${zoneId}:${digest}`;

/** Whether two stored digests were made under the same key (the app's, unlabelled, or one zone's). */
export function sameDigestKey(a: string, b: string): boolean {
  const label = (d: string) => (d.includes(":") ? d.slice(0, d.indexOf(":")) : "");
  return label(a) === label(b);
}
