/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the secret is `whsec_` + base64 of random bytes;
 * each delivery carries `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`:
 * `v1,` + base64(HMAC-SHA256(secret bytes, "<id>.<timestamp>.<body>")). Web Crypto, so any runtime signs alike.
 */
const PREFIX = "whsec_";

const toB64 = (bytes: Uint8Array) => {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
};

/** A new signing secret: 24 random bytes, as receivers' Standard Webhooks libraries expect it. */
export const newSigningSecret = (): string => PREFIX + toB64(crypto.getRandomValues(new Uint8Array(24)));

export async function signPayload(secret: string, id: string, timestamp: number, body: string): Promise<string> {
  const raw = Uint8Array.from(atob(secret.slice(PREFIX.length)), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return `v1,${toB64(new Uint8Array(mac))}`;
}
