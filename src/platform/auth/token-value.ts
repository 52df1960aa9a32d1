/**
 * Token values are 256 random bits, so a plain SHA-256 is the right stored form: unlike a password there is
 * nothing to brute-force, and a single indexed lookup per request keeps authentication cheap.
 */
const PREFIX = "nk_";

/** 256 random bits, base64url (43 characters): token values, session values, CSRF tokens. */
export function randomSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

export const generateTokenValue = (): string => PREFIX + randomSecret();

export async function hashTokenValue(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** What lists show so a user can tell tokens apart: "nk_AbCd…". */
export const displayPrefix = (value: string) => value.slice(0, PREFIX.length + 6);
