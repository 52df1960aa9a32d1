/**
 * Token values are 256 random bits, so a plain SHA-256 is the right stored form: unlike a password there is
 * nothing to brute-force, and a single indexed lookup per request keeps authentication cheap.
 */
const PREFIX = "nk_";

export function generateTokenValue(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const b64url = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  return PREFIX + b64url;
}

export async function hashTokenValue(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** What lists show so a user can tell tokens apart: "nk_AbCd…". */
export const displayPrefix = (value: string) => value.slice(0, PREFIX.length + 6);
