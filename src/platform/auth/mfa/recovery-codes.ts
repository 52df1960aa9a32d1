import { hashTokenValue } from "../token-value.ts";
import { base32Encode } from "./totp.ts";

/** How many one-time recovery codes a user gets at enrolment (and each renewal). */
export const RECOVERY_CODES = 10;

/** 80 random bits as four groups of four (lowercase base32): easy to copy off paper, far too many to guess. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () =>
    base32Encode(crypto.getRandomValues(new Uint8Array(10)))
      .toLowerCase()
      .match(/.{4}/g)!
      .join("-"),
  );
}

/** What is stored and compared: the code as typed in any case, with or without its dashes and spaces. */
export const normalizeRecoveryCode = (typed: string) => typed.toLowerCase().replace(/[\s-]/g, "");

/** Random 80-bit values need no slow hash (as token values do not): SHA-256 of the normalized code. */
export const hashRecoveryCode = (code: string) => hashTokenValue(`recovery:${normalizeRecoveryCode(code)}`);
