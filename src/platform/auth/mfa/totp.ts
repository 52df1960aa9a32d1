/**
 * TOTP (RFC 6238 over RFC 4226's HOTP, HMAC-SHA-1, 30-second steps, 6 digits: what every authenticator app
 * does by default), through Web Crypto so it runs on Node and Deno alike. Small enough to keep here rather than
 * take a dependency for.
 */
export const STEP_SECONDS = 30;
const DIGITS = 6;
/** Steps either side of now that still count: a phone's clock a little off, a code typed as it changed. */
const DRIFT_STEPS = 1;

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

export function base32Decode(text: string): Uint8Array<ArrayBuffer> {
  const clean = text.toUpperCase().replace(/[\s=-]/g, "");
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of clean) {
    const index = ALPHABET.indexOf(ch);
    if (index < 0) throw new Error("not base32");
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Uint8Array.from(out);
}

/** 160 random bits, the key length RFC 4226 recommends, as base32 for the authenticator app. */
export const newTotpSecret = (): string => base32Encode(crypto.getRandomValues(new Uint8Array(20)));

export const stepAt = (now: Date): number => Math.floor(now.getTime() / 1000 / STEP_SECONDS);

/** The HOTP value of one counter (RFC 4226 section 5.3: dynamic truncation). */
export async function hotp(key: Uint8Array<ArrayBuffer>, counter: number, digits = DIGITS): Promise<string> {
  const message = new Uint8Array(8);
  new DataView(message.buffer).setBigUint64(0, BigInt(counter));
  const hmacKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-1" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", hmacKey, message));
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return String(binary % 10 ** digits).padStart(digits, "0");
}

/** The code an authenticator shows at `now` for a base32 secret. */
export const totpCode = (secret: string, now: Date): Promise<string> => hotp(base32Decode(secret), stepAt(now));

/**
 * The step whose code `code` is, within the drift window around `now`, or null when none. The caller refuses
 * a step at or before the last one accepted (a replay).
 */
export async function matchingStep(secret: string, code: string, now: Date): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  const key = base32Decode(secret);
  const current = stepAt(now);
  for (let step = current - DRIFT_STEPS; step <= current + DRIFT_STEPS; step++) {
    if ((await hotp(key, step)) === code) return step;
  }
  return null;
}

/** The otpauth:// URI authenticator apps read from the QR code (Google Authenticator's key URI format). */
export function otpauthUri(input: { issuer: string; account: string; secret: string }): string {
  const label = `${encodeURIComponent(input.issuer)}:${encodeURIComponent(input.account)}`;
  const query = new URLSearchParams({
    secret: input.secret,
    issuer: input.issuer,
    algorithm: "SHA1",
    digits: String(DIGITS),
    period: String(STEP_SECONDS),
  });
  return `otpauth://totp/${label}?${query}`;
}
